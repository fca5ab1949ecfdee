/* Subcommand registry: each app/cmd_*.c registers itself with HS_COMMAND, so adding a
 * command touches one file. */
#ifndef HS_COMMANDS_H
#define HS_COMMANDS_H

typedef int (*hs_command_fn)(int argc, char **argv);  /* argv[0] is the subcommand name */
void hs_command_register(const char *name, const char *summary, hs_command_fn fn, int order);

#define HS_COMMAND(name, summary, fn, order)                                      \
    __attribute__((constructor)) static void hs_register_cmd_##fn(void) {        \
        hs_command_register(name, summary, fn, order);                           \
    }

/* Exit codes: 0 ok, 1 runtime failure, 2 bad input (flags, files). */
#define HS_EXIT_BAD_INPUT 2

#endif
