/* Entry shared by `hybridscope gui` and `hybridscope tui` (argument parsing, model, controller). */
#ifndef HS_EXPLORER_H
#define HS_EXPLORER_H

/* argv[0] is the subcommand; gui = 1 for the SDL2 window. Returns the exit code. */
int hs_explorer_main(int argc, char **argv, int gui);

#endif
