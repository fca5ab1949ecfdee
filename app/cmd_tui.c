/* `hybridscope tui [MODEL]`: the explorer in the terminal. */
#include "commands.h"
#include "explorer.h"

static int cmd_tui(int argc, char **argv) { return hs_explorer_main(argc, argv, 0); }

HS_COMMAND("tui", "explore a model in the terminal (ncurses; works over SSH)", cmd_tui, 110)
