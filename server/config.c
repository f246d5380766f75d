/*
 * config.c - the one srv_config, so that unit tests linking the server's
 * modules without main.c have it too.
 */
#include "config.h"

struct srv_config srv_cfg;
