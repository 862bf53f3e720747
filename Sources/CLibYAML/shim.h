#ifndef BEACOND_CLIBYAML_SHIM_H
#define BEACOND_CLIBYAML_SHIM_H
#include <yaml.h>
#endif
