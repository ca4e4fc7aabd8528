// The system SQLite, for the raw-insert baseline the durable queue is compared with.
#ifndef RESILIENCEKIT_BENCH_SQLITE_SHIM_H
#define RESILIENCEKIT_BENCH_SQLITE_SHIM_H
#include <sqlite3.h>
#endif
