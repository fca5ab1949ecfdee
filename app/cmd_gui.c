/* `hybridscope gui [MODEL]`: the explorer in an SDL2 window. */
#include "commands.h"
#include "explorer.h"

static int cmd_gui(int argc, char **argv) { return hs_explorer_main(argc, argv, 1); }

HS_COMMAND("gui", "explore a model in a window (SDL2)", cmd_gui, 100)
