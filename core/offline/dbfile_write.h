/*
 * dbfile_write.h: writing a database to its binary file (layout: dbfile.h),
 * the offline side of dbfile.h.
 *
 * What it does: validates the database (its rules, then the loader's
 * finite-value check), then writes header, section table and sections to a
 * temporary file beside the target, fsyncs it, renames it over the target
 * and fsyncs the directory, so a crash leaves the old file or the new one,
 * never a half file, and a server that has the old file loaded keeps reading
 * the old inode. What it does not: load files.
 */
#ifndef ANIM_DBFILE_WRITE_H
#define ANIM_DBFILE_WRITE_H

#include "database/dbfile.h"

/* Writes db to path atomically (see above). 0, ANIM_EIO, ANIM_EVERSION
 * (big-endian host), ANIM_ENOMEM or ANIM_EFORMAT with a message. ANIM_EFORMAT
 * is a database the loader would refuse, found before anything is written
 * (no file is created, an existing one is not replaced): db invalid
 * (anim_database_validate), or a float the runtime computes with that is not
 * finite, or a normalization scale that is not > 0 (the loader's check; the
 * message names path, the section and the first bad row and column, or
 * frame and bone). */
int anim_dbfile_write(const anim_database_t *db, const char *path, char *err, int errlen);

#endif
