// The system SQLite (libsqlite3-dev on Debian/Ubuntu). Apple platforms use the SDK's SQLite3 module instead.
#ifndef RESILIENCEKIT_CSQLITE_SHIM_H
#define RESILIENCEKIT_CSQLITE_SHIM_H
#include <sqlite3.h>
#endif
