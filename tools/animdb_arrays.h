/* animdb_arrays.h: the `animdb arrays` subcommand (animdb_arrays.c says what it writes). */
#ifndef ANIMDB_ARRAYS_H
#define ANIMDB_ARRAYS_H

/* argv as animdb's main got it (argv[1] == "arrays"). Exit status: 0, 1 failure, 2 usage. */
int animdb_arrays(int argc, char **argv);

#endif
