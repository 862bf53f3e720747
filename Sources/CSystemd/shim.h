// sd_notify and sd_watchdog_enabled: telling systemd the service is alive and
// what it is doing (libsystemd, Debian's libsystemd-dev).
#include <systemd/sd-daemon.h>
