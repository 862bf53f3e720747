#ifndef BEACOND_CMOSQUITTO_SHIM_H
#define BEACOND_CMOSQUITTO_SHIM_H
#include <mosquitto.h>
#endif
