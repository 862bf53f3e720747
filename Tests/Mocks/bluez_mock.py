#!/usr/bin/python3
"""A stand-in for bluetoothd (BlueZ 5.66, Debian 12) on a private D-Bus bus.

Integration tests start ``serve`` as a child process, drive it with the other
subcommands and read back what the client under test called.  Run it with
/usr/bin/python3: Debian's python3-dbusmock, python3-dbus and python3-gi are
installed for that interpreter only.

Every subcommand takes ``--bus ADDRESS`` (a dbus-daemon address such as
``unix:path=/tmp/bm/bus``; before or after the subcommand name).  Results go to
stdout; on failure a one-line message goes to stderr and the exit status is 1
(2 for bad usage).

Subcommands
-----------
serve [--log FILE]
    Own org.bluez on the bus and serve until killed (SIGTERM/SIGKILL simulate
    bluetoothd stopping; start it again for a fresh, empty object tree).  The
    dbusmock ``bluez5`` template is loaded in-process (AgentManager1 and
    ProfileManager1 on /org/bluez, the stock org.bluez.Mock API on /), plus the
    BlueZ-faithful adapters and devices described below.  --log receives
    dbusmock's call/signal log (default: discarded).
wait-ready [--timeout S]
    Poll (deadline, default 10 s) until org.bluez has an owner and answers.
add-adapter hci0 [--powered yes|no]
    Create /org/bluez/hci0 (address 00:01:02:03:04:05, like the template) and
    emit InterfacesAdded with its properties, Powered as asked (default yes).
remove-adapter hci0
    InterfacesRemoved for each device of the adapter, then for the adapter.
power hci0 on|off
    PropertiesChanged(org.bluez.Adapter1, {Powered}) as bluetoothd does.  Off
    also ends every discovery session and forgets every filter, removes the
    adapter's (temporary) devices first, and emits {Powered: false,
    Discovering: false} in one signal (BlueZ 5.66 adapter_stop()).
add-beacon hci0 ADDRESS UUID MAJOR MINOR POWER RSSI [--address-type random|public] [--name N]
    Device1 object /org/bluez/hci0/dev_AA_BB_.. announced with InterfacesAdded;
    ManufacturerData a{qv} {76: <ay 02 15 uuid major minor power>}, RSSI n.
    Created whatever the discovery state (a device seen earlier).
advertise hci0 ADDRESS RSSI [--uuid U --major N --minor N --power P] [--force]
    One advertising report, handled the way bluetoothd 5.66 does:
      * dropped unless some client is discovering on the adapter (and the
        kernel-side filter lets it through: Transport must include LE, a
        merged RSSI threshold drops weaker reports, a UUIDs filter drops
        iBeacons because they carry no service UUIDs, Pattern is a prefix
        match on the address);
      * an unknown address creates the device (InterfacesAdded);
      * otherwise one PropertiesChanged on Device1 with RSSI (n) - every report
        when a discovery filter is in use, else only on a change of 8 dBm or
        more - and ManufacturerData (a{qv}) - every report if a discovering
        client set DuplicateData=true, else only when the bytes change.
    Omitted iBeacon fields keep the device's current values.  --force skips
    the discovery/filter checks and always emits both properties.  Prints
    what was emitted, or "dropped: REASON" (still exit status 0).
remove-device hci0 ADDRESS
    Remove the device (InterfacesRemoved), as bluetoothd's temporary-device
    timeout does.
calls hci0 [--method NAME] [--clear]
    The adapter's recorded method calls, one JSON object per line, in call
    order (see "Recorded calls").  --clear empties the record afterwards.
fail-discovery hci0 [--times N]
    The next N StartDiscovery calls (default 1) answer InProgress without
    starting anything, as BlueZ 5.66 answers a client when the kernel refuses
    its Start Discovery (discovery_complete: btd_error_busy).
fail-stop hci0 [--times N]
    The next N StopDiscovery calls (default 1) answer InProgress and stop
    nothing, as BlueZ 5.66 answers a client whose own StartDiscovery is still
    waiting for its reply (stop_discovery: client->msg).
wait-discovering hci0 [--state on|off] [--timeout S]
    Poll until Adapter1.Discovering has the given state (default on).
objects
    GetManagedObjects as one JSON document (paths sorted).

Adapter1 behaviour (as BlueZ 5.66 src/adapter.c, per calling client)
---------------------------------------------------------------------
SetDiscoveryFilter(a{sv}): NotReady when unpowered; keys UUIDs as, RSSI n
(-127..20), Pathloss q (<=137), Transport s (le|bredr|auto), DuplicateData b,
Discoverable b, Pattern s - anything else, a wrong type, or RSSI together
with Pathloss -> org.bluez.Error.InvalidArguments.  {} clears the filter.
The filter survives StopDiscovery but not power off or the client leaving the
bus.  StartDiscovery: NotReady when unpowered, InProgress if this client is
already discovering; Discovering true is signalled after the reply.
StopDiscovery: NotReady when unpowered, Failed "No discovery started" for a
client without a session; when the last session ends, the adapter's devices are
removed (temporary, non-connectable) and Discovering false is signalled.  A
client leaving the bus ends its session (and, if it was the last, the same
happens).  RemoveDevice(o), GetDiscoveryFilters.
Properties.Set: Powered (same as ``power``), Alias, Discoverable,
DiscoverableTimeout, Pairable, PairableTimeout; read-only and unknown
properties and wrong signatures fail with the org.freedesktop.DBus errors
gdbus uses.  Get/GetAll fail with org.freedesktop.DBus.Error.InvalidArgs.

Recorded calls
--------------
Each call to an Adapter1 method or to Properties.Set on the adapter is
recorded before it runs, in dbusmock's call log (so the stock
org.freedesktop.DBus.Mock.GetCalls / GetMethodCalls on the adapter see it,
with args as dbusmock records them) and in a richer log printed by ``calls``:

  {"time": 1700000000.123, "method": "SetDiscoveryFilter",
   "args": [{"Transport": "le", "DuplicateData": true}],
   "types": [{"Transport": "s", "DuplicateData": "b"}],
   "sender": ":1.7", "error": null}
  {"time": ..., "method": "StartDiscovery", "args": [], "types": [],
   "sender": ":1.7", "error": null}

"args" is the arguments as JSON; "types" mirrors it with D-Bus signatures (for
an a{sv} argument, the type inside each variant); "error" is the D-Bus error
name the call got back, or null.  Set is recorded as
{"method": "Set", "args": ["org.bluez.Adapter1", "Powered", true],
 "types": ["s", "s", "b"]}.

Differences from the stock dbusmock bluez5 template (0.28.7), for reference:
its AddDevice gives ManufacturerData the type aa{qv} instead of a{qv};
UpdateProperties fails on dict values; its StartDiscovery raises KeyError
(org.freedesktop.DBus.Python.KeyError) unless SetDiscoveryFilter was called
first, then exposes a non-BlueZ Adapter1.DiscoveryFilter property and sets
Discoverable; it never checks Powered, never validates filters and never
returns InProgress/Failed.  None of that applies to adapters and devices made
by this script, which builds them itself (AddObject + its own signals).  The
stock org.bluez.Mock / org.freedesktop.DBus.Mock API stays available on the
bus; do not call Mock.Reset on / (it drops this script's control methods) -
restart ``serve`` instead.  The control API this CLI uses is
org.beacond.BluezMock on / (AddAdapter sb, RemoveAdapter s, SetPowered sb,
AddDevice sssna{qv}s, Advertise ssna{qv}b, RemoveDevice ss, GetCalls s,
ClearCalls s, GetManufacturerData ss, Version).
"""

import argparse
import json
import os
import re
import sys
import time

try:
    import dbus
    import dbus.bus
    import dbus.exceptions
    import dbus.service
except ImportError:  # pragma: no cover - wrong interpreter
    sys.stderr.write('bluez_mock: python3-dbus is missing; run this with /usr/bin/python3\n')
    sys.exit(1)

BUS_NAME = 'org.bluez'
EXT_IFACE = 'org.beacond.BluezMock'
VERSION = 'bluez_mock 1'
ADAPTER_IFACE = 'org.bluez.Adapter1'
DEVICE_IFACE = 'org.bluez.Device1'
OM_IFACE = 'org.freedesktop.DBus.ObjectManager'
PROPS_IFACE = 'org.freedesktop.DBus.Properties'
INTROSPECT_IFACE = 'org.freedesktop.DBus.Introspectable'
BLUEZ_ERR = 'org.bluez.Error.'
DBUS_ERR = 'org.freedesktop.DBus.Error.'
APPLE = 0x004C
RSSI_THRESHOLD = 8          # src/device.c: report RSSI changes of 8 dBm or more
PATHLOSS_MAX = 137          # src/adapter.c
FILTER_KEYS = ['UUIDs', 'RSSI', 'Pathloss', 'Transport', 'DuplicateData', 'Discoverable', 'Pattern']
ADDRESS_RE = re.compile(r'^[0-9A-F]{2}(:[0-9A-F]{2}){5}$')
ADAPTER_NAME_RE = re.compile(r'^[A-Za-z0-9_]+$')


class Failure(Exception):
    """A failure to report as one line on stderr, exit status 1."""


# --------------------------------------------------------------------------
# Plain helpers shared by client and server
# --------------------------------------------------------------------------

def norm_address(text):
    address = text.strip().upper().replace('-', ':').replace('_', ':')
    if not ADDRESS_RE.match(address):
        raise Failure(f'not a Bluetooth address: {text!r} (want AA:BB:CC:DD:EE:FF)')
    return address


def parse_uuid(text):
    digits = text.strip().lower().replace('-', '')
    if digits.startswith('0x'):
        digits = digits[2:]
    if len(digits) != 32 or any(c not in '0123456789abcdef' for c in digits):
        raise Failure(f'not a 128-bit UUID: {text!r}')
    return bytes.fromhex(digits)


def format_uuid(raw):
    h = raw.hex().upper()
    return f'{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}'


def ibeacon_payload(uuid, major, minor, power):
    """The 23 bytes after the company id: 02 15 uuid major minor power."""
    return bytes([0x02, 0x15]) + uuid + major.to_bytes(2, 'big') + minor.to_bytes(2, 'big') + (power & 0xFF).to_bytes(1, 'big')


def parse_ibeacon(payload):
    """(uuid, major, minor, power) from the bytes after company 0x004C, or None."""
    if len(payload) != 23 or payload[0] != 0x02 or payload[1] != 0x15:
        return None
    power = payload[22] - 256 if payload[22] > 127 else payload[22]
    return payload[2:18], int.from_bytes(payload[18:20], 'big'), int.from_bytes(payload[20:22], 'big'), power


def adapter_path(name):
    if not ADAPTER_NAME_RE.match(name):
        raise Failure(f'not an adapter name: {name!r} (want e.g. hci0)')
    return '/org/bluez/' + name


def device_path(adapter, address):
    return adapter_path(adapter) + '/dev_' + address.replace(':', '_')


_SIMPLE_SIGS = [
    # order matters: Boolean and ObjectPath subclass int and str
    (dbus.Boolean, 'b'), (dbus.Byte, 'y'), (dbus.Int16, 'n'), (dbus.UInt16, 'q'),
    (dbus.Int32, 'i'), (dbus.UInt32, 'u'), (dbus.Int64, 'x'), (dbus.UInt64, 't'),
    (dbus.Double, 'd'), (dbus.ObjectPath, 'o'), (dbus.Signature, 'g'), (dbus.String, 's'),
    (dbus.types.UnixFd, 'h'),
]


def dbus_signature(value):
    """D-Bus signature of a dbus-python value (the type inside a variant)."""
    for cls, sig in _SIMPLE_SIGS:
        if isinstance(value, cls):
            return sig
    if isinstance(value, (dbus.ByteArray, bytes, bytearray)):
        return 'ay'
    if isinstance(value, dbus.Dictionary) or isinstance(value, dict):
        sig = getattr(value, 'signature', None)
        if sig:
            return 'a{' + sig + '}'
        if value:
            k, v = next(iter(value.items()))
            return 'a{' + dbus_signature(k) + dbus_signature(v) + '}'
        return 'a{sv}'
    if isinstance(value, dbus.Struct) or isinstance(value, tuple):
        sig = getattr(value, 'signature', None)
        return '(' + (sig or ''.join(dbus_signature(v) for v in value)) + ')'
    if isinstance(value, (dbus.Array, list)):
        sig = getattr(value, 'signature', None)
        if sig:
            return 'a' + sig
        return 'a' + (dbus_signature(value[0]) if value else 'v')
    if isinstance(value, bool):
        return 'b'
    if isinstance(value, int):
        return 'i'
    if isinstance(value, float):
        return 'd'
    if isinstance(value, str):
        return 's'
    return '?'


def to_json(value):
    if isinstance(value, (dbus.Boolean, bool)):
        return bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, (bytes, bytearray)):
        return list(value)
    if isinstance(value, dict):
        return {str(to_json(k)): to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    return repr(value)


def types_of(value):
    """Mirror of an argument with signatures; a{sv} shows each variant's type."""
    if isinstance(value, dict) and getattr(value, 'signature', None) == 'sv':
        return {str(k): dbus_signature(v) for k, v in value.items()}
    return dbus_signature(value)


def mfr_to_dbus(mfr):
    """{company: bytes} -> a{qv} with an ay inside each variant."""
    return dbus.Dictionary(
        {dbus.UInt16(k): dbus.Array([dbus.Byte(b) for b in v], signature='y') for k, v in mfr.items()},
        signature='qv')


def mfr_from_dbus(value):
    out = {}
    for k, v in value.items():
        out[int(k)] = bytes(int(b) for b in v)
    return out


def dbus_error(name, message):
    return dbus.exceptions.DBusException(message, name=name)


# --------------------------------------------------------------------------
# Server: dbusmock in-process, bluez5 template, plus BlueZ-faithful objects
# --------------------------------------------------------------------------

class Client:  # pylint: disable=too-few-public-methods
    """One D-Bus client's discovery session / pre-set filter on one adapter."""

    def __init__(self):
        self.filter = None        # dict of parsed filter values, or None
        self.discovering = False
        self.watch = None


class AdapterState:  # pylint: disable=too-few-public-methods
    def __init__(self):
        self.clients = {}         # unique bus name -> Client
        self.discoverable_by_discovery = False
        self.failing_starts = 0   # StartDiscovery calls still to refuse (`fail-discovery`)
        self.failing_stops = 0    # StopDiscovery calls still to refuse (`fail-stop`)
        self.calls = []           # rich call records for `calls`


class BluezMock:
    """The mock's behaviour.  All signals are sent through dbusmock's EmitSignal."""

    def __init__(self, main, bus, glib, mockobject):
        self.main = main
        self.bus = bus
        self.glib = glib
        self.objects = mockobject.objects
        self.pending = {}         # (path, interface) -> [property names], like gdbus
        self.actions = []         # deferred work, run before the pending flush
        self.scheduled = False

    # ---- signal plumbing ----------------------------------------------

    def changed(self, obj, iface, *names):
        names_list = self.pending.setdefault((obj.path, iface), [])
        for name in names:
            if name not in names_list:
                names_list.append(name)

    def flush(self):
        """Run deferred work, then one PropertiesChanged per object and interface."""
        while self.actions:
            action = self.actions.pop(0)
            try:
                action()
            except Exception as e:  # pylint: disable=broad-except
                sys.stderr.write(f'bluez_mock serve: deferred action failed: {e!r}\n')
        pending, self.pending = self.pending, {}
        for (path, iface), names in pending.items():
            obj = self.objects.get(path)
            if obj is None:
                continue
            props = obj.props.get(iface, {})
            changed = dbus.Dictionary({n: props[n] for n in names if n in props}, signature='sv')
            invalidated = dbus.Array([n for n in names if n not in props], signature='s')
            obj.EmitSignal(PROPS_IFACE, 'PropertiesChanged', 'sa{sv}as', [iface, changed, invalidated])

    def later(self, action=None):
        """After the current method's reply (bluetoothd answers first, signals next)."""
        if action is not None:
            self.actions.append(action)
        if not self.scheduled:
            self.scheduled = True

            def run():
                self.scheduled = False
                self.flush()
                return False
            self.glib.idle_add(run, priority=self.glib.PRIORITY_HIGH)

    def emit_added(self, path, interfaces):
        self.main.EmitSignal(OM_IFACE, 'InterfacesAdded', 'oa{sa{sv}}', [
            dbus.ObjectPath(path),
            dbus.Dictionary({i: dbus.Dictionary(p, signature='sv') for i, p in interfaces.items()},
                            signature='sa{sv}')])

    def emit_removed(self, path, names):
        self.main.EmitSignal(OM_IFACE, 'InterfacesRemoved', 'oas', [
            dbus.ObjectPath(path), dbus.Array(names, signature='s')])

    # ---- lookups --------------------------------------------------------

    def adapter(self, name):
        try:
            path = adapter_path(name)
        except Failure as e:
            raise dbus_error(EXT_IFACE + '.InvalidArguments', str(e)) from e
        obj = self.objects.get(path)
        if obj is None or not hasattr(obj, 'bm'):
            raise dbus_error(EXT_IFACE + '.NoSuchAdapter', f'no adapter {name} (add-adapter first)')
        return obj

    def devices_of(self, adapter):
        prefix = adapter.path + '/'
        return [p for p in sorted(self.objects) if p.startswith(prefix)]

    @staticmethod
    def powered(adapter):
        return bool(adapter.props[ADAPTER_IFACE]['Powered'])

    # ---- exporting methods ----------------------------------------------

    @staticmethod
    def export(obj, iface, fn, in_sig, out_sig, sender=False):
        method = dbus.service.method(iface, in_signature=in_sig, out_signature=out_sig,
                                     sender_keyword='sender' if sender else None)(fn)
        obj.methods.setdefault(iface, {})[fn.__name__] = (in_sig, out_sig, '', method)

    def export_properties(self, obj, writable):
        """BlueZ's (gdbus) Get/GetAll/Set, with its error names."""
        model = self

        def Get(self_obj, interface, name):  # noqa: N802 pylint: disable=invalid-name
            props = self_obj.props.get(interface)
            if props is None:
                raise dbus_error(DBUS_ERR + 'InvalidArgs', f"No such interface '{interface}'")
            if name not in props:
                raise dbus_error(DBUS_ERR + 'InvalidArgs', f"No such property '{name}'")
            return props[name]

        def GetAll(self_obj, interface):  # noqa: N802 pylint: disable=invalid-name
            props = self_obj.props.get(interface)
            if props is None:
                raise dbus_error(DBUS_ERR + 'InvalidArgs', f"No such interface '{interface}'")
            return dbus.Dictionary(props, signature='sv')

        def Set(self_obj, interface, name, value, sender=None):  # noqa: N802 pylint: disable=invalid-name
            def body():
                props = self_obj.props.get(interface)
                if props is None:
                    raise dbus_error(DBUS_ERR + 'InvalidArgs', f"No such interface '{interface}'")
                if name not in props:
                    raise dbus_error(DBUS_ERR + 'UnknownProperty', f"No such property '{name}'")
                if (interface, name) not in writable:
                    raise dbus_error(DBUS_ERR + 'PropertyReadOnly', f"Property '{name}' is not writable")
                if dbus_signature(value) != dbus_signature(props[name]):
                    raise dbus_error(DBUS_ERR + 'InvalidSignature', f"Invalid signature for '{name}'")
                if interface == ADAPTER_IFACE and name == 'Powered':
                    model.later(lambda: model.set_powered(self_obj, bool(value)))
                    return
                typed = type(props[name])(value)
                if props[name] != typed:
                    props[name] = typed
                    if interface == DEVICE_IFACE and name == 'Alias' and not typed:
                        # empty alias resets to the name or the dashed address
                        props[name] = dbus.String(props.get('Name', props['Address'].replace(':', '-')))
                    model.changed(self_obj, interface, name)
                    model.later()
            if hasattr(self_obj, 'bm'):
                return model.recorded(self_obj, 'Set', [interface, name, value], sender, body)
            return body()

        self.export(obj, PROPS_IFACE, Get, 'ss', 'v')
        self.export(obj, PROPS_IFACE, GetAll, 's', 'a{sv}')
        self.export(obj, PROPS_IFACE, Set, 'ssv', '', sender=True)

    def recorded(self, adapter, method, args, sender, body):
        """Record a call (dbusmock call log + rich log), run it, note its error."""
        now = time.time()
        record = {'time': now, 'method': method, 'args': list(args), 'sender': sender, 'error': None}
        adapter.call_log.append((int(now), method, list(args)))
        adapter.bm.calls.append(record)
        adapter.log(f'{method} {json.dumps(to_json(list(args)))} from {sender}')
        try:
            return body()
        except dbus.exceptions.DBusException as e:
            record['error'] = e.get_dbus_name()
            adapter.log(f'{method} -> {e.get_dbus_name()}: {e.get_dbus_message()}')
            raise

    # ---- adapters -------------------------------------------------------

    def add_adapter(self, name, powered):
        path = adapter_path(name)
        if path in self.objects:
            raise dbus_error(BLUEZ_ERR + 'AlreadyExists', f'{path} already exists')
        digit = int(name[-1]) if name[-1].isdigit() else 0
        address = ':'.join(f'{digit + i:02d}' for i in range(6))   # as the template: hci0 -> 00:01:02:03:04:05
        props = {   # src/adapter.c adapter_properties[], in table order, non-experimental only
            'Address': dbus.String(address),
            'AddressType': dbus.String('public'),
            'Name': dbus.String('beacond-test'),
            'Alias': dbus.String('beacond-test'),
            'Class': dbus.UInt32(0),
            'Powered': dbus.Boolean(powered),
            'Discoverable': dbus.Boolean(False),
            'DiscoverableTimeout': dbus.UInt32(180),
            'Pairable': dbus.Boolean(True),
            'PairableTimeout': dbus.UInt32(0),
            'Discovering': dbus.Boolean(False),
            'UUIDs': dbus.Array(['00001800-0000-1000-8000-00805f9b34fb',
                                 '00001801-0000-1000-8000-00805f9b34fb',
                                 '0000180a-0000-1000-8000-00805f9b34fb',
                                 '00001200-0000-1000-8000-00805f9b34fb'], signature='s'),
            'Modalias': dbus.String('usb:v1D6Bp0246d0542'),
            'Roles': dbus.Array(['central', 'peripheral'], signature='s'),
        }
        self.main.AddObject(path, ADAPTER_IFACE, props, [])
        obj = self.objects[path]
        # the interfaces bluetoothd registers on an adapter, in registration order
        obj.props = {
            INTROSPECT_IFACE: {},
            ADAPTER_IFACE: obj.props[ADAPTER_IFACE],
            PROPS_IFACE: {},
            'org.bluez.GattManager1': {},
            'org.bluez.Media1': {'SupportedUUIDs': dbus.Array(
                ['0000110a-0000-1000-8000-00805f9b34fb', '0000110b-0000-1000-8000-00805f9b34fb'],
                signature='s')},
            'org.bluez.NetworkServer1': {},
            'org.bluez.LEAdvertisingManager1': {
                'ActiveInstances': dbus.Byte(0),
                'SupportedInstances': dbus.Byte(5),
                'SupportedIncludes': dbus.Array(['tx-power', 'appearance', 'local-name'], signature='s'),
            },
        }
        obj.bm = AdapterState()
        self.export_adapter_methods(obj)
        self.export_properties(obj, {(ADAPTER_IFACE, n) for n in (
            'Alias', 'Powered', 'Discoverable', 'DiscoverableTimeout', 'Pairable', 'PairableTimeout')})
        self.emit_added(path, obj.props)
        return path

    def remove_adapter(self, name):
        obj = self.adapter(name)
        for client in obj.bm.clients.values():
            self.unwatch(client)
        obj.bm.clients.clear()
        for path in self.devices_of(obj):
            self.remove_device_object(path)
        names = list(obj.props)
        self.main.RemoveObject(obj.path)
        self.drop_pending(obj.path)
        # gdbus prepends removed interfaces: the last registered comes first
        names = [PROPS_IFACE, INTROSPECT_IFACE] + [n for n in reversed(names) if n not in (PROPS_IFACE, INTROSPECT_IFACE)]
        self.emit_removed(obj.path, names)

    def set_powered(self, adapter, on):
        """settings_changed() + adapter_start()/adapter_stop() of BlueZ 5.66."""
        if self.objects.get(adapter.path) is not adapter:
            return False
        props = adapter.props[ADAPTER_IFACE]
        if bool(props['Powered']) == on:
            return False
        props['Powered'] = dbus.Boolean(on)
        self.changed(adapter, ADAPTER_IFACE, 'Powered')
        if not on:
            for client in adapter.bm.clients.values():
                self.unwatch(client)
            adapter.bm.clients.clear()
            # discovery_cleanup(): temporary, non-connectable devices go at once
            for path in self.devices_of(adapter):
                self.remove_device_object(path)
            if adapter.bm.discoverable_by_discovery:
                adapter.bm.discoverable_by_discovery = False
                props['Discoverable'] = dbus.Boolean(False)
                self.changed(adapter, ADAPTER_IFACE, 'Discoverable')
            props['Discovering'] = dbus.Boolean(False)
            self.changed(adapter, ADAPTER_IFACE, 'Discovering', 'Powered')
        return True

    # ---- discovery --------------------------------------------------------

    def unwatch(self, client):
        if client.watch is not None:
            client.watch.cancel()
            client.watch = None

    def watch(self, adapter, sender, client):
        if client.watch is not None or not sender:
            return

        def owner_changed(new_owner):
            if new_owner or adapter.bm.clients.get(sender) is not client:
                return
            if self.objects.get(adapter.path) is not adapter:
                return
            adapter.log(f'discovery client {sender} left the bus')
            self.unwatch(client)
            client.filter = None
            if client.discovering:
                self.stop_session(adapter, sender, client)
            else:
                del adapter.bm.clients[sender]
            self.later()
        client.watch = self.bus.watch_name_owner(sender, owner_changed)

    def discovering_clients(self, adapter):
        return [c for c in adapter.bm.clients.values() if c.discovering]

    def update_discovering(self, adapter):
        props = adapter.props[ADAPTER_IFACE]
        clients = self.discovering_clients(adapter)
        want = bool(clients)
        if bool(props['Discovering']) != want:
            props['Discovering'] = dbus.Boolean(want)
            self.changed(adapter, ADAPTER_IFACE, 'Discovering')
        want_discoverable = any(c.filter and c.filter.get('Discoverable') for c in clients)
        if want_discoverable and not props['Discoverable']:
            adapter.bm.discoverable_by_discovery = True
            props['Discoverable'] = dbus.Boolean(True)
            self.changed(adapter, ADAPTER_IFACE, 'Discoverable')
        elif not want_discoverable and adapter.bm.discoverable_by_discovery:
            adapter.bm.discoverable_by_discovery = False
            props['Discoverable'] = dbus.Boolean(False)
            self.changed(adapter, ADAPTER_IFACE, 'Discoverable')

    def stop_session(self, adapter, sender, client, defer=False):
        """discovery_stop()/discovery_remove(): a pre-set filter survives while its owner is on the bus."""
        client.discovering = False
        if client.filter is None or client.watch is None:
            self.unwatch(client)
            adapter.bm.clients.pop(sender, None)
        if not self.discovering_clients(adapter):
            # discovery_cleanup(): temporary, non-connectable devices go, then Discovering false
            def cleanup():
                if self.objects.get(adapter.path) is adapter:
                    for path in self.devices_of(adapter):
                        self.remove_device_object(path)
            if defer:
                self.actions.append(cleanup)
            else:
                cleanup()
        self.update_discovering(adapter)

    @staticmethod
    def parse_filter(properties):
        """parse_discovery_filter_dict(); None for {} (clears), raises on bad input."""
        invalid = dbus_error(BLUEZ_ERR + 'InvalidArguments', 'Invalid arguments in method call')
        if not properties:
            return None
        result = {}
        for key, value in properties.items():
            key = str(key)
            if key == 'UUIDs':
                if not isinstance(value, dbus.Array) or value.signature not in ('s', None):
                    raise invalid
                uuids = []
                for item in value:
                    if not isinstance(item, str):
                        raise invalid
                    text = str(item).lower()
                    if text.startswith('0x'):
                        text = text[2:]
                    if re.fullmatch(r'[0-9a-f]{4}', text):
                        text = f'0000{text}-0000-1000-8000-00805f9b34fb'
                    elif re.fullmatch(r'[0-9a-f]{8}', text):
                        text = f'{text}-0000-1000-8000-00805f9b34fb'
                    elif not re.fullmatch(r'[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}', text):
                        raise invalid
                    uuids.append(text)
                result['UUIDs'] = uuids
            elif key == 'RSSI':
                if type(value) is not dbus.Int16 or not -127 <= int(value) <= 20:  # pylint: disable=unidiomatic-typecheck
                    raise invalid
                result['RSSI'] = int(value)
            elif key == 'Pathloss':
                if type(value) is not dbus.UInt16 or int(value) > PATHLOSS_MAX:  # pylint: disable=unidiomatic-typecheck
                    raise invalid
                result['Pathloss'] = int(value)
            elif key == 'Transport':
                if type(value) is not dbus.String or str(value) not in ('le', 'bredr', 'auto'):  # pylint: disable=unidiomatic-typecheck
                    raise invalid
                result['Transport'] = str(value)
            elif key in ('DuplicateData', 'Discoverable'):
                if type(value) is not dbus.Boolean:  # pylint: disable=unidiomatic-typecheck
                    raise invalid
                result[key] = bool(value)
            elif key == 'Pattern':
                if type(value) is not dbus.String:  # pylint: disable=unidiomatic-typecheck
                    raise invalid
                result['Pattern'] = str(value)
            else:
                raise invalid
        if 'RSSI' in result and 'Pathloss' in result:
            raise invalid
        return result

    def export_adapter_methods(self, obj):
        model = self
        not_ready = lambda: dbus_error(BLUEZ_ERR + 'NotReady', 'Resource Not Ready')  # noqa: E731

        def SetDiscoveryFilter(adapter, properties, sender=None):  # noqa: N802 pylint: disable=invalid-name
            def body():
                if not model.powered(adapter):
                    raise not_ready()
                parsed = model.parse_filter(properties)
                client = adapter.bm.clients.get(sender)
                if client is not None:
                    client.filter = parsed
                    if parsed is None and not client.discovering:
                        model.unwatch(client)
                        del adapter.bm.clients[sender]
                elif parsed is not None:
                    client = Client()
                    client.filter = parsed
                    adapter.bm.clients[sender] = client
                    model.watch(adapter, sender, client)
                if client is not None and client.discovering:
                    model.update_discovering(adapter)
                    model.later()
            return model.recorded(adapter, 'SetDiscoveryFilter', [properties], sender, body)

        def StartDiscovery(adapter, sender=None):  # noqa: N802 pylint: disable=invalid-name
            def body():
                if not model.powered(adapter):
                    raise not_ready()
                if adapter.bm.failing_starts > 0:
                    adapter.bm.failing_starts -= 1
                    raise dbus_error(BLUEZ_ERR + 'InProgress', 'Operation already in progress')
                client = adapter.bm.clients.get(sender)
                if client is not None and client.discovering:
                    raise dbus_error(BLUEZ_ERR + 'InProgress', 'Operation already in progress')
                if client is None:
                    client = Client()
                    adapter.bm.clients[sender] = client
                client.discovering = True
                model.watch(adapter, sender, client)
                model.update_discovering(adapter)
                model.later()
            return model.recorded(adapter, 'StartDiscovery', [], sender, body)

        def StopDiscovery(adapter, sender=None):  # noqa: N802 pylint: disable=invalid-name
            def body():
                if not model.powered(adapter):
                    raise not_ready()
                if adapter.bm.failing_stops > 0:
                    adapter.bm.failing_stops -= 1
                    raise dbus_error(BLUEZ_ERR + 'InProgress', 'Operation already in progress')
                client = adapter.bm.clients.get(sender)
                if client is None or not client.discovering:
                    raise dbus_error(BLUEZ_ERR + 'Failed', 'No discovery started')
                model.stop_session(adapter, sender, client, defer=True)
                model.later()
            return model.recorded(adapter, 'StopDiscovery', [], sender, body)

        def RemoveDevice(adapter, device, sender=None):  # noqa: N802 pylint: disable=invalid-name
            def body():
                path = str(device)
                if not path.startswith(adapter.path + '/') or path not in model.objects:
                    raise dbus_error(BLUEZ_ERR + 'DoesNotExist', 'Does Not Exist')
                model.later(lambda: model.remove_device_object(path))
            return model.recorded(adapter, 'RemoveDevice', [device], sender, body)

        def GetDiscoveryFilters(adapter, sender=None):  # noqa: N802 pylint: disable=invalid-name
            return model.recorded(adapter, 'GetDiscoveryFilters', [], sender,
                                  lambda: dbus.Array(FILTER_KEYS, signature='s'))

        self.export(obj, ADAPTER_IFACE, SetDiscoveryFilter, 'a{sv}', '', sender=True)
        self.export(obj, ADAPTER_IFACE, StartDiscovery, '', '', sender=True)
        self.export(obj, ADAPTER_IFACE, StopDiscovery, '', '', sender=True)
        self.export(obj, ADAPTER_IFACE, RemoveDevice, 'o', '', sender=True)
        self.export(obj, ADAPTER_IFACE, GetDiscoveryFilters, '', 'as', sender=True)

    # ---- devices ----------------------------------------------------------

    def create_device(self, adapter, address, address_type, rssi, mfr, name=''):
        path = adapter.path + '/dev_' + address.replace(':', '_')
        if path in self.objects:
            raise dbus_error(BLUEZ_ERR + 'AlreadyExists', f'{path} already exists')
        props = {}   # src/device.c device_properties[], in table order, those that exist for a beacon
        props['Address'] = dbus.String(address)
        props['AddressType'] = dbus.String(address_type)
        if name:
            props['Name'] = dbus.String(name)
        props['Alias'] = dbus.String(name or address.replace(':', '-'))
        props['Paired'] = dbus.Boolean(False)
        props['Bonded'] = dbus.Boolean(False)
        props['Trusted'] = dbus.Boolean(False)
        props['Blocked'] = dbus.Boolean(False)
        props['LegacyPairing'] = dbus.Boolean(False)
        props['RSSI'] = dbus.Int16(rssi)
        props['Connected'] = dbus.Boolean(False)
        props['UUIDs'] = dbus.Array([], signature='s')
        props['Adapter'] = dbus.ObjectPath(adapter.path)
        if mfr:
            props['ManufacturerData'] = mfr_to_dbus(mfr)
        props['ServicesResolved'] = dbus.Boolean(False)
        self.main.AddObject(path, DEVICE_IFACE, props, [])
        obj = self.objects[path]
        obj.props = {INTROSPECT_IFACE: {}, DEVICE_IFACE: obj.props[DEVICE_IFACE], PROPS_IFACE: {}}
        obj.bm_rssi = int(rssi)
        obj.bm_mfr = dict(mfr)
        self.export_properties(obj, {(DEVICE_IFACE, n) for n in ('Alias', 'Trusted', 'Blocked')})
        self.emit_added(path, obj.props)
        return path

    def remove_device_object(self, path):
        if path not in self.objects:
            return
        self.main.RemoveObject(path)
        self.drop_pending(path)
        self.emit_removed(path, [PROPS_IFACE, INTROSPECT_IFACE, DEVICE_IFACE])

    def drop_pending(self, path):
        for key in [k for k in self.pending if k[0] == path]:
            del self.pending[key]

    def report_filter(self, adapter, address, rssi):
        """None if a report passes kernel and bluetoothd filtering, else why not."""
        clients = self.discovering_clients(adapter)
        if not clients:
            return f'{adapter.path.rsplit("/", 1)[1]} is not discovering'
        filters = [c.filter for c in clients if c.filter is not None]
        regular = len(filters) < len(clients)
        if filters and not regular:
            # merge_discovery_filters(): what the kernel is asked to pass
            transports = set()
            for f in filters:
                transports.add(f.get('Transport', 'auto'))
            if transports == {'bredr'}:
                return 'discovery filter Transport=bredr (no LE scanning)'
            if any(not f.get('UUIDs') for f in filters):
                uuids = []
            else:
                uuids = sorted({u for f in filters for u in f['UUIDs']})
            if uuids:
                return 'discovery filter UUIDs set; an iBeacon carries no service UUIDs'
            if all('RSSI' in f for f in filters):
                threshold = min(f['RSSI'] for f in filters)
                if rssi < threshold:
                    return f'RSSI {rssi} below the filter threshold {threshold}'
        patterns = [f['Pattern'] for f in filters if 'Pattern' in f]
        if patterns and not any(address.startswith(p) for p in patterns):
            return 'discovery filter Pattern does not match the address'
        return None

    def advertise(self, adapter, address, rssi, mfr, force):
        path = adapter.path + '/dev_' + address.replace(':', '_')
        device = self.objects.get(path)
        if not force:
            if not self.powered(adapter):
                return 'dropped: adapter is powered off'
            reason = self.report_filter(adapter, address, rssi)
            if reason:
                return 'dropped: ' + reason
        if device is None:
            if not mfr:
                raise dbus_error(EXT_IFACE + '.InvalidArguments',
                                 f'{address} is unknown: give --uuid/--major/--minor/--power (or add-beacon)')
            self.create_device(adapter, address, 'random', rssi, mfr)
            return 'added ' + path
        clients = self.discovering_clients(adapter)
        filtered = force or any(c.filter is not None for c in clients)
        duplicate = force or any(c.filter is not None and c.filter.get('DuplicateData') for c in clients)
        props = device.props[DEVICE_IFACE]
        emitted = []
        # device_set_rssi_with_delta(dev, rssi, filtered ? 0 : 8)
        old = device.bm_rssi
        if rssi == 0 or old == 0:
            send_rssi = rssi != old
        else:
            send_rssi = abs(rssi - old) >= (0 if filtered else RSSI_THRESHOLD)
        if send_rssi:
            device.bm_rssi = rssi
            props['RSSI'] = dbus.Int16(rssi)
            self.changed(device, DEVICE_IFACE, 'RSSI')
            emitted.append('RSSI')
        # device_set_manufacturer_data(dev, list, duplicate)
        if not mfr:
            mfr = dict(device.bm_mfr)
        if duplicate:
            device.bm_mfr = dict(mfr)
            send_mfr = bool(mfr)
        else:
            send_mfr = any(device.bm_mfr.get(k) != v for k, v in mfr.items())
            device.bm_mfr.update(mfr)
        if send_mfr:
            props['ManufacturerData'] = mfr_to_dbus(device.bm_mfr)
            self.changed(device, DEVICE_IFACE, 'ManufacturerData')
            emitted.append('ManufacturerData')
        if not emitted:
            return ('nothing emitted: RSSI change below 8 dBm and ManufacturerData unchanged '
                    '(no discovery filter / no DuplicateData)')
        return 'emitted ' + ','.join(emitted)

    # ---- the control API on / -------------------------------------------

    def export_control(self):
        model = self
        main = self.main

        def run(body):
            try:
                return body()
            finally:
                model.flush()

        def Version(_obj):  # noqa: N802 pylint: disable=invalid-name
            return VERSION

        def AddAdapter(_obj, name, powered):  # noqa: N802 pylint: disable=invalid-name
            return run(lambda: dbus.ObjectPath(model.add_adapter(str(name), bool(powered))))

        def RemoveAdapter(_obj, name):  # noqa: N802 pylint: disable=invalid-name
            run(lambda: model.remove_adapter(str(name)))

        def SetPowered(_obj, name, on):  # noqa: N802 pylint: disable=invalid-name
            adapter = model.adapter(str(name))
            changed = run(lambda: model.set_powered(adapter, bool(on)))
            return ('powered ' if on else 'unpowered ') + str(name) if changed else 'unchanged'

        def FailDiscoveryStarts(_obj, name, times):  # noqa: N802 pylint: disable=invalid-name
            model.adapter(str(name)).bm.failing_starts = int(times)

        def FailDiscoveryStops(_obj, name, times):  # noqa: N802 pylint: disable=invalid-name
            model.adapter(str(name)).bm.failing_stops = int(times)

        def AddDevice(_obj, name, address, address_type, rssi, mfr, device_name):  # noqa: N802 pylint: disable=invalid-name
            adapter = model.adapter(str(name))
            return run(lambda: dbus.ObjectPath(model.create_device(
                adapter, str(address), str(address_type), int(rssi), mfr_from_dbus(mfr), str(device_name))))

        def Advertise(_obj, name, address, rssi, mfr, force):  # noqa: N802 pylint: disable=invalid-name
            adapter = model.adapter(str(name))
            return run(lambda: model.advertise(adapter, str(address), int(rssi), mfr_from_dbus(mfr), bool(force)))

        def GetManufacturerData(_obj, name, address):  # noqa: N802 pylint: disable=invalid-name
            adapter = model.adapter(str(name))
            device = model.objects.get(adapter.path + '/dev_' + str(address).replace(':', '_'))
            if device is None:
                return dbus.Dictionary({}, signature='qv')
            return mfr_to_dbus(device.bm_mfr)

        def RemoveDevice(_obj, name, address):  # noqa: N802 pylint: disable=invalid-name
            adapter = model.adapter(str(name))
            path = adapter.path + '/dev_' + str(address).replace(':', '_')
            if path not in model.objects:
                raise dbus_error(BLUEZ_ERR + 'DoesNotExist', f'no device {path}')
            run(lambda: model.remove_device_object(path))

        def GetCalls(_obj, name):  # noqa: N802 pylint: disable=invalid-name
            adapter = model.adapter(str(name))
            lines = []
            for r in adapter.bm.calls:
                lines.append(json.dumps({
                    'time': round(r['time'], 3), 'method': r['method'],
                    'args': [to_json(a) for a in r['args']],
                    'types': [types_of(a) for a in r['args']],
                    'sender': r['sender'], 'error': r['error']}))
            return dbus.Array(lines, signature='s')

        def ClearCalls(_obj, name):  # noqa: N802 pylint: disable=invalid-name
            adapter = model.adapter(str(name))
            adapter.bm.calls = []
            adapter.call_log = []

        def GetManagedObjects(_obj):  # noqa: N802 pylint: disable=invalid-name
            # the template's version is a logged mock method: it would send a
            # Mock.MethodCalled signal from org.bluez on every call
            return dbus.Dictionary({dbus.ObjectPath(p): model.objects[p].props
                                    for p in sorted(model.objects) if p != '/'}, signature='oa{sa{sv}}')

        self.export(main, OM_IFACE, GetManagedObjects, '', 'a{oa{sa{sv}}}')
        for fn, i, o in ((Version, '', 's'), (AddAdapter, 'sb', 'o'), (RemoveAdapter, 's', ''),
                         (SetPowered, 'sb', 's'), (AddDevice, 'sssna{qv}s', 'o'),
                         (Advertise, 'ssna{qv}b', 's'), (GetManufacturerData, 'ss', 'a{qv}'),
                         (RemoveDevice, 'ss', ''), (GetCalls, 's', 'as'), (ClearCalls, 's', ''),
                         (FailDiscoveryStarts, 'su', ''), (FailDiscoveryStops, 'su', '')):
            self.export(main, EXT_IFACE, fn, i, o)


def serve(address, logfile):
    os.environ['DBUS_SYSTEM_BUS_ADDRESS'] = address   # the mock's "system bus"
    import dbus.mainloop.glib  # pylint: disable=import-outside-toplevel
    from gi.repository import GLib  # pylint: disable=import-outside-toplevel
    from dbusmock import mockobject  # pylint: disable=import-outside-toplevel

    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    try:
        bus = dbus.bus.BusConnection(address)
    except dbus.exceptions.DBusException as e:
        raise Failure(f'cannot connect to {address}: {e.get_dbus_message()}') from e
    loop = GLib.MainLoop()
    bus.add_signal_receiver(lambda *_: loop.quit(), signal_name='Disconnected',
                            dbus_interface='org.freedesktop.DBus.Local',
                            path='/org/freedesktop/DBus/Local')
    try:
        bus_name = dbus.service.BusName(BUS_NAME, bus, allow_replacement=True,
                                        replace_existing=True, do_not_queue=True)
    except dbus.exceptions.NameExistsException as e:
        raise Failure(f'{BUS_NAME} is owned by someone else on {address}') from e
    main = mockobject.DBusMockObject(bus_name, '/', OM_IFACE, {}, logfile, True)
    main.AddTemplate('bluez5', {})
    mockobject.objects['/'] = main
    manager = mockobject.objects['/org/bluez']     # the template's AgentManager1/ProfileManager1
    manager.props = {INTROSPECT_IFACE: {}, 'org.bluez.AgentManager1': {}, 'org.bluez.ProfileManager1': {}}
    model = BluezMock(main, bus, GLib, mockobject)
    model.export_control()
    sys.stderr.write(f'bluez_mock: serving {BUS_NAME} on {address} (pid {os.getpid()})\n')
    sys.stderr.flush()
    try:
        loop.run()
    except KeyboardInterrupt:
        pass
    return 0


# --------------------------------------------------------------------------
# Client side
# --------------------------------------------------------------------------

class Control:
    def __init__(self, address):
        self.address = address
        try:
            self.bus = dbus.bus.BusConnection(address)
        except dbus.exceptions.DBusException as e:
            raise Failure(f'cannot connect to bus {address}: {e.get_dbus_message()}') from e

    def has_owner(self):
        return bool(self.bus.name_has_owner(BUS_NAME))

    def require_owner(self):
        if not self.has_owner():
            raise Failure(f'{BUS_NAME} has no owner on {self.address} (run `serve`, then `wait-ready`)')

    def call(self, method, *args, path='/', iface=EXT_IFACE, timeout=10.0):
        self.require_owner()
        obj = self.bus.get_object(BUS_NAME, path, introspect=False)
        try:
            return getattr(obj, method)(*args, dbus_interface=iface, timeout=timeout)
        except dbus.exceptions.DBusException as e:
            name = e.get_dbus_name() or 'error'
            if name == DBUS_ERR + 'UnknownMethod' and iface == EXT_IFACE:
                raise Failure(f'{BUS_NAME} on {self.address} is not bluez_mock serve: {e.get_dbus_message()}') from e
            raise Failure(f'{name}: {e.get_dbus_message()}') from e


def wait_until(deadline, probe, what):
    last = None
    while True:
        try:
            if probe():
                return
        except (dbus.exceptions.DBusException, Failure) as e:
            last = e
        if time.monotonic() >= deadline:
            detail = f' (last error: {last})' if last else ''
            raise Failure(f'timed out waiting for {what}{detail}')
        time.sleep(0.05)


def cmd_wait_ready(args):
    deadline = time.monotonic() + args.timeout
    state = {}

    def probe():
        if 'control' not in state:
            state['control'] = Control(args.bus)
        control = state['control']
        if not control.has_owner():
            return False
        version = control.call('Version', timeout=1.0)
        control.call('GetManagedObjects', iface=OM_IFACE, timeout=1.0)
        state['version'] = str(version)
        state['owner'] = str(control.bus.get_name_owner(BUS_NAME))
        return True
    wait_until(deadline, probe, f'{BUS_NAME} on {args.bus}')
    print(f'ready {state["owner"]} {state["version"]}')


def cmd_add_adapter(args):
    path = Control(args.bus).call('AddAdapter', args.adapter, dbus.Boolean(args.powered == 'yes'))
    print(path)


def cmd_remove_adapter(args):
    Control(args.bus).call('RemoveAdapter', args.adapter)
    print('removed ' + adapter_path(args.adapter))


def cmd_power(args):
    print(Control(args.bus).call('SetPowered', args.adapter, dbus.Boolean(args.state == 'on')))


def check_range(name, value, low, high):
    if not low <= value <= high:
        raise Failure(f'{name} {value} out of range {low}..{high}')
    return value


def cmd_add_beacon(args):
    address = norm_address(args.address)
    payload = ibeacon_payload(parse_uuid(args.uuid), check_range('major', args.major, 0, 65535),
                              check_range('minor', args.minor, 0, 65535),
                              check_range('power', args.power, -128, 127))
    check_range('RSSI', args.rssi, -128, 127)
    path = Control(args.bus).call('AddDevice', args.adapter, address, args.address_type,
                                  dbus.Int16(args.rssi), mfr_to_dbus({APPLE: payload}), args.name or '')
    print(path)


def cmd_advertise(args):
    address = norm_address(args.address)
    check_range('RSSI', args.rssi, -128, 127)
    control = Control(args.bus)
    fields = (args.uuid, args.major, args.minor, args.power)
    mfr = {}
    if any(f is not None for f in fields):
        current = mfr_from_dbus(control.call('GetManufacturerData', args.adapter, address))
        parsed = parse_ibeacon(current.get(APPLE, b''))
        if parsed is None and any(f is None for f in fields):
            raise Failure(f'{address} has no iBeacon data yet: give all of --uuid --major --minor --power')
        uuid = parse_uuid(args.uuid) if args.uuid is not None else parsed[0]
        major = check_range('major', args.major, 0, 65535) if args.major is not None else parsed[1]
        minor = check_range('minor', args.minor, 0, 65535) if args.minor is not None else parsed[2]
        power = check_range('power', args.power, -128, 127) if args.power is not None else parsed[3]
        mfr = {APPLE: ibeacon_payload(uuid, major, minor, power)}
    print(control.call('Advertise', args.adapter, address, dbus.Int16(args.rssi),
                       mfr_to_dbus(mfr), dbus.Boolean(args.force)))


def cmd_remove_device(args):
    address = norm_address(args.address)
    Control(args.bus).call('RemoveDevice', args.adapter, address)
    print('removed ' + device_path(args.adapter, address))


def cmd_calls(args):
    control = Control(args.bus)
    lines = control.call('GetCalls', args.adapter)
    for line in lines:
        if args.method and json.loads(line)['method'] != args.method:
            continue
        print(line)
    if args.clear:
        control.call('ClearCalls', args.adapter)


def cmd_fail_discovery(args):
    Control(args.bus).call('FailDiscoveryStarts', args.adapter, dbus.UInt32(args.times))
    print(f'the next {args.times} StartDiscovery on {args.adapter} answer InProgress')


def cmd_fail_stop(args):
    Control(args.bus).call('FailDiscoveryStops', args.adapter, dbus.UInt32(args.times))
    print(f'the next {args.times} StopDiscovery on {args.adapter} answer InProgress')


def cmd_wait_discovering(args):
    want = args.state == 'on'
    deadline = time.monotonic() + args.timeout
    control = Control(args.bus)
    path = adapter_path(args.adapter)

    def probe():
        value = control.call('Get', ADAPTER_IFACE, 'Discovering', path=path, iface=PROPS_IFACE, timeout=1.0)
        return bool(value) == want
    wait_until(deadline, probe, f'{path} Discovering={str(want).lower()}')
    print(f'{args.adapter} discovering {"on" if want else "off"}')


def cmd_objects(args):
    objects = Control(args.bus).call('GetManagedObjects', iface=OM_IFACE)
    print(json.dumps({str(p): to_json(objects[p]) for p in sorted(objects)}, indent=1, sort_keys=False))


def cmd_serve(args):
    logfile = args.log or os.devnull
    return serve(args.bus, logfile)


def build_parser():
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument('--bus', dest='bus_sub', metavar='ADDRESS', help='dbus-daemon address')
    parser = argparse.ArgumentParser(
        prog='bluez_mock.py', description='BlueZ 5.66 stand-in for beacond integration tests.',
        epilog='See the module docstring for the behaviour of each subcommand.')
    parser.add_argument('--bus', metavar='ADDRESS', help='dbus-daemon address (required)')
    sub = parser.add_subparsers(dest='command', metavar='COMMAND')
    sub.required = True

    p = sub.add_parser('serve', parents=[common], help='own org.bluez until killed')
    p.add_argument('--log', metavar='FILE', help="dbusmock's call/signal log (default: discarded)")
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser('wait-ready', parents=[common], help='wait until org.bluez answers')
    p.add_argument('--timeout', type=float, default=10.0, metavar='S')
    p.set_defaults(func=cmd_wait_ready)

    p = sub.add_parser('add-adapter', parents=[common], help='add /org/bluez/ADAPTER')
    p.add_argument('adapter')
    p.add_argument('--powered', choices=['yes', 'no'], default='yes')
    p.set_defaults(func=cmd_add_adapter)

    p = sub.add_parser('remove-adapter', parents=[common], help='remove an adapter and its devices')
    p.add_argument('adapter')
    p.set_defaults(func=cmd_remove_adapter)

    p = sub.add_parser('power', parents=[common], help='power an adapter on or off')
    p.add_argument('adapter')
    p.add_argument('state', choices=['on', 'off'])
    p.set_defaults(func=cmd_power)

    p = sub.add_parser('add-beacon', parents=[common], help='add an iBeacon Device1')
    p.add_argument('adapter')
    p.add_argument('address')
    p.add_argument('uuid')
    p.add_argument('major', type=int)
    p.add_argument('minor', type=int)
    p.add_argument('power', type=int)
    p.add_argument('rssi', type=int)
    p.add_argument('--address-type', choices=['random', 'public'], default='random')
    p.add_argument('--name', default='')
    p.set_defaults(func=cmd_add_beacon)

    p = sub.add_parser('advertise', parents=[common], help='one advertising report')
    p.add_argument('adapter')
    p.add_argument('address')
    p.add_argument('rssi', type=int)
    p.add_argument('--uuid')
    p.add_argument('--major', type=int)
    p.add_argument('--minor', type=int)
    p.add_argument('--power', type=int)
    p.add_argument('--force', action='store_true', help='skip discovery/filter checks, emit both properties')
    p.set_defaults(func=cmd_advertise)

    p = sub.add_parser('remove-device', parents=[common], help='remove a device')
    p.add_argument('adapter')
    p.add_argument('address')
    p.set_defaults(func=cmd_remove_device)

    p = sub.add_parser('calls', parents=[common], help="the adapter's recorded method calls (JSON lines)")
    p.add_argument('adapter')
    p.add_argument('--method', help='only this method')
    p.add_argument('--clear', action='store_true', help='empty the record afterwards')
    p.set_defaults(func=cmd_calls)

    p = sub.add_parser('fail-discovery', parents=[common], help='refuse the next StartDiscovery calls with InProgress')
    p.add_argument('adapter')
    p.add_argument('--times', type=int, default=1)
    p.set_defaults(func=cmd_fail_discovery)

    p = sub.add_parser('fail-stop', parents=[common], help='refuse the next StopDiscovery calls with InProgress')
    p.add_argument('adapter')
    p.add_argument('--times', type=int, default=1)
    p.set_defaults(func=cmd_fail_stop)

    p = sub.add_parser('wait-discovering', parents=[common], help='wait for Adapter1.Discovering')
    p.add_argument('adapter')
    p.add_argument('--state', choices=['on', 'off'], default='on')
    p.add_argument('--timeout', type=float, default=10.0, metavar='S')
    p.set_defaults(func=cmd_wait_discovering)

    p = sub.add_parser('objects', parents=[common], help='GetManagedObjects as JSON')
    p.set_defaults(func=cmd_objects)
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    args.bus = args.bus_sub or args.bus
    if not args.bus:
        parser.error('--bus ADDRESS is required')
    try:
        if hasattr(args, 'adapter'):
            adapter_path(args.adapter)
        return args.func(args) or 0
    except Failure as e:
        sys.stderr.write(f'bluez_mock {args.command}: {e}\n')
        return 1
    except dbus.exceptions.DBusException as e:
        sys.stderr.write(f'bluez_mock {args.command}: {e.get_dbus_name()}: {e.get_dbus_message()}\n')
        return 1


if __name__ == '__main__':
    sys.exit(main())
