#!/usr/bin/env bash
# Writes the fuzzer's seed inputs into seeds/ (a few hundred bytes in all).
# Each seed is a well-formed instance of one input kind the fuzz target reads,
# so libFuzzer starts from inputs that get past the length checks.
# Re-run after editing; the files are meant to be committed.
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p seeds
rm -f seeds/*

# hex "3E 2A 02": writes those bytes to stdout.
hex() { local h; for h in $*; do printf "\\x$h"; done; }
# u32be N: four bytes, big-endian.
u32be() { hex "$(printf '%02X %02X %02X %02X' $(($1 >> 24 & 255)) $(($1 >> 16 & 255)) $(($1 >> 8 & 255)) $(($1 & 255)))"; }
# nbytes "hex…": how many bytes the hex string holds.
nbytes() { set -- $1; echo $#; }

UUID="E2 C5 6D B5 DF FB 48 D2 B0 60 D0 F5 A7 10 96 E0"
ADDR="58 C1 C9 72 39 D0"                                    # D0:39:72:C9:C1:58, little-endian
FLAGS="02 01 06"
IBEACON="1A FF 4C 00 02 15 $UUID 00 01 00 2A C5"            # major 1, minor 42, power -59
NAME="08 09 62 65 61 63 6F 6E 31"                           # complete local name "beacon1"
OTHER="07 FF 59 00 01 02 03 04"                            # Nordic (0x0059) manufacturer data
AD="$FLAGS $IBEACON"                                        # 30 bytes

# Advertising payloads (what IBeaconFrame.decode reads).
hex "$AD" > seeds/ad-flags-ibeacon.bin
hex "$FLAGS $NAME $OTHER" > seeds/ad-name-other-company.bin

# LE Meta event, legacy advertising report (0x02): ADV_NONCONN_IND with an iBeacon, RSSI -65.
legacy_params="02 01 03 01 $ADDR $(printf %02X "$(nbytes "$AD")") $AD BF"
hex "3E $(printf %02X "$(nbytes "$legacy_params")") $legacy_params" > seeds/hci-legacy-ibeacon.bin

# Legacy event with two reports: the iBeacon, then its scan response (name), RSSI 127 = unknown.
two_params="02 02 03 01 $ADDR 1E $AD BF 04 01 $ADDR 09 $NAME 7F"
hex "3E $(printf %02X "$(nbytes "$two_params")") $two_params" > seeds/hci-legacy-two-reports.bin

# LE Meta event, extended advertising report (0x0D): legacy ADV_IND bits (0x0013), PHY 1M, no SID,
# TX -8, RSSI -70, no periodic interval, no direct address, then the data.
ext_params="0D 01 13 00 01 $ADDR 01 00 FF F8 BA 00 00 00 00 00 00 00 00 00 1E $AD"
hex "3E $(printf %02X "$(nbytes "$ext_params")") $ext_params" > seeds/hci-extended-ibeacon.bin

# btsnoop: 16-byte header, then records of (orig len, incl len, flags, drops, time in µs since year 0).
TIME=$((0x00DCDDB30F2F8000 + 1714564800250000))             # 2024-05-01 12:00:00.25 UTC
record() { # record FLAGS "packet hex"
    local n; n=$(nbytes "$2")
    u32be "$n"; u32be "$n"; u32be "$1"; u32be 0; u32be $((TIME >> 32)); u32be $((TIME & 0xFFFFFFFF)); hex "$2"
}
EVENT="3E $(printf %02X "$(nbytes "$legacy_params")") $legacy_params"
{   # datalink 2001 (btmon -w): new-index record, then the event (opcode 3).
    printf 'btsnoop\0'; u32be 1; u32be 2001
    record 0 "00 00 00 00 00 00 00 00 68 63 69 30 00 00 00 00"
    record 3 "$EVENT"
} > seeds/btsnoop-monitor.bin
{   # datalink 1001 (HCI): a command (flags 2) is skipped, the event (flags 3) read.
    printf 'btsnoop\0'; u32be 1; u32be 1001
    record 2 "0C 20 02 01 00"
    record 3 "$EVENT"
} > seeds/btsnoop-hci.bin
{   # datalink 1002 (H4): the event behind its 0x04 type byte.
    printf 'btsnoop\0'; u32be 1; u32be 1002
    record 3 "04 $EVENT"
} > seeds/btsnoop-h4.bin

# pcapng: blocks of (type, total length, body, total length) in the section's byte order.
# h32le / h32be N: the four bytes of N as hex text; u32le N: the bytes themselves.
h32le() { printf '%02X %02X %02X %02X' $(($1 & 255)) $(($1 >> 8 & 255)) $(($1 >> 16 & 255)) $(($1 >> 24 & 255)); }
h32be() { printf '%02X %02X %02X %02X' $(($1 >> 24 & 255)) $(($1 >> 16 & 255)) $(($1 >> 8 & 255)) $(($1 & 255)); }
u32le() { hex "$(h32le "$1")"; }
pad4() { # pad4 "hex…": the bytes, then zeros up to a multiple of four.
    local out="$1" n; n=$(nbytes "$1")
    while ((n % 4)); do out="$out 00"; n=$((n + 1)); done
    echo "$out"
}
block() { # block le|be TYPE "body hex"
    local body n; body=$(pad4 "$3"); n=$(($(nbytes "$body") + 12))
    u32$1 "$2"; u32$1 "$n"; hex "$body"; u32$1 "$n"
}
UNIX_TIME=1714564800250000                                   # the same moment, in µs since 1970
epb() { # epb le|be "packet hex": interface 0, at UNIX_TIME (if_tsresol left at 10^-6)
    local n; n=$(nbytes "$2")
    block "$1" 6 "$(h32$1 0) $(h32$1 $((UNIX_TIME >> 32))) $(h32$1 $((UNIX_TIME & 0xFFFFFFFF))) $(h32$1 "$n") $(h32$1 "$n") $2"
}
# An advertising-channel packet: access address, ADV_NONCONN_IND (36 bytes: AdvA, AdvData), CRC
# (left as zeros: the headers below say the sniffer checked it).
AIR="D6 BE 89 8E 02 24 $ADDR $AD 00 00 00"
{   # Little-endian section; LE_LL_WITH_PHDR (256): channel 0, RSSI -60, noise, offenses,
    # reference access address, flags 0x0C03 (dewhitened, signal valid, CRC checked and valid).
    block le 0x0A0D0D0A "4D 3C 2B 1A 01 00 00 00 FF FF FF FF FF FF FF FF"
    block le 1 "00 01 00 00 00 00 00 00"
    epb le "00 C4 80 00 D6 BE 89 8E 03 0C $AIR"
} > seeds/pcapng-le-ll-phdr.bin
{   # Big-endian section; NORDIC_BLE (272), protocol 3: board, payload length 55, version, counter,
    # EVENT_PACKET_ADVERTISING; header of 10: CRC OK, channel 37, RSSI -60, event counter, time.
    block be 0x0A0D0D0A "1A 2B 3C 4D 00 01 00 00 FF FF FF FF FF FF FF FF"
    block be 1 "01 10 00 00 00 00 00 00"
    epb be "00 37 00 03 00 00 02 0A 01 25 3C 00 00 00 00 00 00 $AIR"
} > seeds/pcapng-be-nordic.bin
{   # HCI with a direction header (201) beside an Ethernet interface (1) nobody reads.
    block le 0x0A0D0D0A "4D 3C 2B 1A 01 00 00 00 FF FF FF FF FF FF FF FF"
    block le 1 "C9 00 00 00 00 00 00 00"
    block le 1 "01 00 00 00 00 00 00 00"
    epb le "00 00 00 01 04 $EVENT"
} > seeds/pcapng-h4-phdr.bin

# Classic pcap: a 24-byte header (magic, version 2.4, zone, accuracy, snap length, link type), then
# records of (seconds, fraction, captured length, original length, packet).
{   # Little-endian, microseconds, LE_LL_WITH_PHDR (256), the radio header as in the pcapng seed.
    hex "D4 C3 B2 A1 02 00 04 00 00 00 00 00 00 00 00 00 FF FF 00 00 00 01 00 00"
    LL="00 C4 80 00 D6 BE 89 8E 03 0C $AIR"
    u32le $((UNIX_TIME / 1000000)); u32le $((UNIX_TIME % 1000000)); u32le "$(nbytes "$LL")"; u32le "$(nbytes "$LL")"; hex "$LL"
} > seeds/pcap-le-ll-phdr.bin
{   # Big-endian, nanoseconds, H4 (187).
    hex "A1 B2 3C 4D 00 02 00 04 00 00 00 00 00 00 00 00 00 00 FF FF 00 00 00 BB"
    n=$(($(nbytes "$EVENT") + 1))
    u32be $((UNIX_TIME / 1000000)); u32be $((UNIX_TIME % 1000000 * 1000)); u32be "$n"; u32be "$n"; hex "04 $EVENT"
} > seeds/pcap-be-h4-nsec.bin

# hcidump --raw text, with and without hcidump -t times, continuation lines, a sent command.
{
    echo 'HCI sniffer - Bluetooth packet analyzer ver 5.66'
    echo 'device: hci0 snap_len: 1500 filter: 0xffffffffffffffff'
    echo '< 01 0C 20 02 01 00'
    words=(04 $EVENT)                                       # split after 20 bytes, as hcidump wraps
    echo "> ${words[*]:0:20}"
    echo "  ${words[*]:20}"
    echo "2024-05-01 12:00:00.250000 > 04 3E 0C 02 01 04 01 $ADDR 00 7F"
    echo "1714564800.5 > 04 $EVENT"
} > seeds/hcidump.txt

# A trace CSV for `beacond evaluate --trace`, as a spreadsheet exports one:
# a byte-order mark, CRLF, reordered and quoted columns, a fraction, an empty row.
{
    printf '\xef\xbb\xbf"uuid",rssi,time_ms,note,major,minor,measured_power,true_distance_m\r\n'
    printf 'E2C56DB5-DFFB-48D2-B060-D0F5A71096E0,-60.0,0,"by the door, ""left""",1,1,-59,1.0\r\n'
    printf ',,,,,,,\r\n'
    printf 'E2C56DB5-DFFB-48D2-B060-D0F5A71096E0,-71.5,100,,1,2,-65,2.5\r\n'
} > seeds/trace.csv

ls -l seeds
