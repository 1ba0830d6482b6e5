/*
 * parley-walbuf: a SQLite VFS over the default one that writes a commit's WAL
 * frames with one write instead of two per frame.
 *
 * SQLite appends each WAL frame as two writes (its 24-byte header, then the
 * page), so a commit that dirties N pages costs 2N pwrite calls, then one
 * fsync. On a thread that asked for it (`PRAGMA parley_wal_buffer = on`), this
 * VFS gathers the contiguous writes a WAL file receives in memory and writes
 * them in one call at the first moment anything could depend on them being in
 * the file:
 *   - xSync (with synchronous = FULL, every commit syncs its frames before
 *     SQLite publishes them in the WAL index, so the commit is durable and
 *     visible exactly as before);
 *   - xShmBarrier on any file of the same thread (SQLite calls it while it
 *     publishes a new WAL index header, so even a commit that does not sync
 *     never makes frames visible that are not in the file);
 *   - a read overlapping the gathered bytes, a write elsewhere, xTruncate,
 *     xFileSize, xClose, and a gathered size past WB_MAX_BUFFER.
 * The default VFS takes at most 128 KiB per write, so a larger commit is
 * written in pieces of WB_MAX_WRITE bytes (one write up to ~115 frames of
 * 1 KiB pages).
 * A write that fails is reported by the call that flushed (a failed sync fails
 * the commit, which SQLite rolls back); should the flush inside xShmBarrier,
 * which cannot report, fail, the next call on that file returns the error.
 *
 * Every other call, and every file that is not a WAL or is used by a thread
 * that did not ask, goes to the default VFS unchanged. A connection is used by
 * one thread at a time (better-sqlite3 keeps each on its own thread), so the
 * list of files holding gathered bytes is per thread.
 *
 * Loaded as a SQLite extension (entry point sqlite3_walbuf_init); it registers
 * itself as the default VFS once per process and stays loaded.
 */
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT1

#include <string.h>

#define WB_VFS_NAME "parley-walbuf"
#define WB_PRAGMA "parley_wal_buffer"
#define WB_STATS_PRAGMA "parley_wal_buffer_stats"
/* Gathered bytes written at this size even without a sync (a batch of 512 rows is ~2 MiB of 1 KiB frames). */
#define WB_MAX_BUFFER (8 * 1024 * 1024)
#define WB_MIN_CAPACITY (64 * 1024)
/* The most the unix VFS's xWrite takes in one call: it masks the amount with 0x1ffff. */
#define WB_MAX_WRITE (120 * 1024)

typedef struct WbFile WbFile;
struct WbFile {
  sqlite3_file base;   /* pMethods: wbMethods, or NULL when the real open failed */
  sqlite3_file *real;  /* the default VFS's file, allocated right after this struct */
  int isWal;
  unsigned char *buf;
  sqlite3_int64 start; /* file offset of buf[0] */
  sqlite3_int64 len;   /* gathered bytes */
  sqlite3_int64 cap;
  WbFile *nextPending; /* the thread's list of files holding gathered bytes */
  int pending;
  int deferredErr;     /* a flush in xShmBarrier failed: returned by the next call */
};

static sqlite3_vfs *wbReal;
static sqlite3_vfs wbVfs;
static _Thread_local int wbOn;
static _Thread_local WbFile *wbPendingList;
static sqlite3_int64 wbGathered; /* writes gathered instead of made */
static sqlite3_int64 wbFlushes;  /* writes made of gathered bytes (at most WB_MAX_WRITE each) */
static sqlite3_int64 wbBytes;    /* bytes written by those */

#define REAL(p) (((WbFile *)(p))->real)

static void wbUnlist(WbFile *p) {
  if (!p->pending) return;
  for (WbFile **pp = &wbPendingList; *pp; pp = &(*pp)->nextPending) {
    if (*pp == p) {
      *pp = p->nextPending;
      break;
    }
  }
  p->nextPending = 0;
  p->pending = 0;
}

/* Writes the gathered bytes, if any; returns a deferred error first. */
static int wbFlush(WbFile *p) {
  int rc = SQLITE_OK;
  for (sqlite3_int64 done = 0; done < p->len && rc == SQLITE_OK;) {
    int n = p->len - done > WB_MAX_WRITE ? WB_MAX_WRITE : (int)(p->len - done);
    rc = p->real->pMethods->xWrite(p->real, p->buf + done, n, p->start + done);
    __atomic_add_fetch(&wbFlushes, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&wbBytes, n, __ATOMIC_RELAXED);
    done += n;
  }
  p->len = 0;
  wbUnlist(p);
  if (p->deferredErr != SQLITE_OK) {
    if (rc == SQLITE_OK) rc = p->deferredErr;
    p->deferredErr = SQLITE_OK;
  }
  return rc;
}

static void wbFlushThread(void) {
  while (wbPendingList) {
    WbFile *p = wbPendingList;
    int rc = wbFlush(p); /* unlists p */
    if (rc != SQLITE_OK) p->deferredErr = rc;
  }
}

static int wbClose(sqlite3_file *f) {
  WbFile *p = (WbFile *)f;
  int rc = wbFlush(p);
  int rc2 = p->real->pMethods->xClose(p->real);
  sqlite3_free(p->buf);
  p->buf = 0;
  p->cap = 0;
  return rc != SQLITE_OK ? rc : rc2;
}

static int wbRead(sqlite3_file *f, void *z, int n, sqlite3_int64 off) {
  WbFile *p = (WbFile *)f;
  if (p->len > 0 && off < p->start + p->len && off + n > p->start) {
    int rc = wbFlush(p);
    if (rc != SQLITE_OK) return rc;
  }
  return p->real->pMethods->xRead(p->real, z, n, off);
}

static int wbGrow(WbFile *p, sqlite3_int64 need) {
  sqlite3_int64 cap = p->cap > 0 ? p->cap : WB_MIN_CAPACITY;
  while (cap < need) cap *= 2;
  if (cap == p->cap) return 1;
  unsigned char *b = sqlite3_realloc64(p->buf, (sqlite3_uint64)cap);
  if (!b) return 0;
  p->buf = b;
  p->cap = cap;
  return 1;
}

static int wbWrite(sqlite3_file *f, const void *z, int n, sqlite3_int64 off) {
  WbFile *p = (WbFile *)f;
  int rc;
  if (!p->isWal || !wbOn) {
    if (p->len > 0 || p->deferredErr != SQLITE_OK) {
      rc = wbFlush(p);
      if (rc != SQLITE_OK) return rc;
    }
    return p->real->pMethods->xWrite(p->real, z, n, off);
  }
  if (p->deferredErr != SQLITE_OK || (p->len > 0 && (off != p->start + p->len || p->len + n > WB_MAX_BUFFER))) {
    rc = wbFlush(p);
    if (rc != SQLITE_OK) return rc;
  }
  if (n > WB_MAX_BUFFER || !wbGrow(p, p->len + n)) {
    rc = wbFlush(p);
    if (rc != SQLITE_OK) return rc;
    return p->real->pMethods->xWrite(p->real, z, n, off);
  }
  if (p->len == 0) p->start = off;
  memcpy(p->buf + p->len, z, (size_t)n);
  p->len += n;
  __atomic_add_fetch(&wbGathered, 1, __ATOMIC_RELAXED);
  if (!p->pending) {
    p->pending = 1;
    p->nextPending = wbPendingList;
    wbPendingList = p;
  }
  return SQLITE_OK;
}

static int wbTruncate(sqlite3_file *f, sqlite3_int64 size) {
  WbFile *p = (WbFile *)f;
  int rc = wbFlush(p);
  if (rc != SQLITE_OK) return rc;
  return p->real->pMethods->xTruncate(p->real, size);
}

static int wbSync(sqlite3_file *f, int flags) {
  WbFile *p = (WbFile *)f;
  int rc = wbFlush(p);
  if (rc != SQLITE_OK) return rc;
  return p->real->pMethods->xSync(p->real, flags);
}

static int wbFileSize(sqlite3_file *f, sqlite3_int64 *size) {
  WbFile *p = (WbFile *)f;
  int rc = wbFlush(p);
  if (rc != SQLITE_OK) return rc;
  return p->real->pMethods->xFileSize(p->real, size);
}

static int wbLock(sqlite3_file *f, int level) { return REAL(f)->pMethods->xLock(REAL(f), level); }
static int wbUnlock(sqlite3_file *f, int level) { return REAL(f)->pMethods->xUnlock(REAL(f), level); }
static int wbCheckReservedLock(sqlite3_file *f, int *out) { return REAL(f)->pMethods->xCheckReservedLock(REAL(f), out); }

/* `PRAGMA parley_wal_buffer [= on|off]` (this thread) and `PRAGMA parley_wal_buffer_stats` (the process). */
static int wbPragma(char **arg) {
  const char *name = arg[1];
  const char *value = arg[2];
  if (sqlite3_stricmp(name, WB_PRAGMA) == 0) {
    if (value) {
      if (sqlite3_stricmp(value, "on") == 0 || strcmp(value, "1") == 0) {
        wbOn = 1;
      } else if (sqlite3_stricmp(value, "off") == 0 || strcmp(value, "0") == 0) {
        wbOn = 0;
        wbFlushThread();
      } else {
        arg[0] = sqlite3_mprintf("parley_wal_buffer takes on or off");
        return SQLITE_ERROR;
      }
    }
    arg[0] = sqlite3_mprintf("%s", wbOn ? "on" : "off");
    return SQLITE_OK;
  }
  if (sqlite3_stricmp(name, WB_STATS_PRAGMA) == 0) {
    if (value) {
      arg[0] = sqlite3_mprintf("parley_wal_buffer_stats takes no value");
      return SQLITE_ERROR;
    }
    arg[0] = sqlite3_mprintf("gathered=%lld flushes=%lld bytes=%lld", __atomic_load_n(&wbGathered, __ATOMIC_RELAXED),
                             __atomic_load_n(&wbFlushes, __ATOMIC_RELAXED), __atomic_load_n(&wbBytes, __ATOMIC_RELAXED));
    return SQLITE_OK;
  }
  return SQLITE_NOTFOUND;
}

static int wbFileControl(sqlite3_file *f, int op, void *arg) {
  if (op == SQLITE_FCNTL_PRAGMA) {
    int rc = wbPragma((char **)arg);
    if (rc != SQLITE_NOTFOUND) return rc;
  }
  return REAL(f)->pMethods->xFileControl(REAL(f), op, arg);
}

static int wbSectorSize(sqlite3_file *f) { return REAL(f)->pMethods->xSectorSize(REAL(f)); }
static int wbDeviceCharacteristics(sqlite3_file *f) { return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f)); }
static int wbShmMap(sqlite3_file *f, int pg, int size, int extend, void volatile **pp) {
  return REAL(f)->pMethods->xShmMap(REAL(f), pg, size, extend, pp);
}
static int wbShmLock(sqlite3_file *f, int offset, int n, int flags) { return REAL(f)->pMethods->xShmLock(REAL(f), offset, n, flags); }
static void wbShmBarrier(sqlite3_file *f) {
  wbFlushThread();
  REAL(f)->pMethods->xShmBarrier(REAL(f));
}
static int wbShmUnmap(sqlite3_file *f, int deleteFlag) { return REAL(f)->pMethods->xShmUnmap(REAL(f), deleteFlag); }
static int wbFetch(sqlite3_file *f, sqlite3_int64 off, int n, void **pp) { return REAL(f)->pMethods->xFetch(REAL(f), off, n, pp); }
static int wbUnfetch(sqlite3_file *f, sqlite3_int64 off, void *p) { return REAL(f)->pMethods->xUnfetch(REAL(f), off, p); }

/* One table per version the default VFS's files may have (the unix VFS's are version 3). */
static sqlite3_io_methods wbMethods[3];

static int wbOpen(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *f, int flags, int *outFlags) {
  (void)vfs;
  WbFile *p = (WbFile *)f;
  memset(p, 0, sizeof(*p));
  p->real = (sqlite3_file *)&p[1];
  p->isWal = (flags & SQLITE_OPEN_WAL) != 0;
  int rc = wbReal->xOpen(wbReal, name, p->real, flags, outFlags);
  if (p->real->pMethods) {
    int v = p->real->pMethods->iVersion;
    p->base.pMethods = &wbMethods[(v < 1 ? 1 : v > 3 ? 3 : v) - 1];
  }
  return rc;
}

static int wbDelete(sqlite3_vfs *v, const char *name, int syncDir) {
  (void)v;
  return wbReal->xDelete(wbReal, name, syncDir);
}
static int wbAccess(sqlite3_vfs *v, const char *name, int flags, int *out) {
  (void)v;
  return wbReal->xAccess(wbReal, name, flags, out);
}
static int wbFullPathname(sqlite3_vfs *v, const char *name, int n, char *out) {
  (void)v;
  return wbReal->xFullPathname(wbReal, name, n, out);
}
static void *wbDlOpen(sqlite3_vfs *v, const char *name) {
  (void)v;
  return wbReal->xDlOpen(wbReal, name);
}
static void wbDlError(sqlite3_vfs *v, int n, char *out) {
  (void)v;
  wbReal->xDlError(wbReal, n, out);
}
static void (*wbDlSym(sqlite3_vfs *v, void *h, const char *sym))(void) {
  (void)v;
  return wbReal->xDlSym(wbReal, h, sym);
}
static void wbDlClose(sqlite3_vfs *v, void *h) {
  (void)v;
  wbReal->xDlClose(wbReal, h);
}
static int wbRandomness(sqlite3_vfs *v, int n, char *out) {
  (void)v;
  return wbReal->xRandomness(wbReal, n, out);
}
static int wbSleep(sqlite3_vfs *v, int us) {
  (void)v;
  return wbReal->xSleep(wbReal, us);
}
static int wbCurrentTime(sqlite3_vfs *v, double *out) {
  (void)v;
  return wbReal->xCurrentTime(wbReal, out);
}
static int wbGetLastError(sqlite3_vfs *v, int n, char *out) {
  (void)v;
  return wbReal->xGetLastError ? wbReal->xGetLastError(wbReal, n, out) : 0;
}
static int wbCurrentTimeInt64(sqlite3_vfs *v, sqlite3_int64 *out) {
  (void)v;
  return wbReal->xCurrentTimeInt64(wbReal, out);
}
static int wbSetSystemCall(sqlite3_vfs *v, const char *name, sqlite3_syscall_ptr fn) {
  (void)v;
  return wbReal->xSetSystemCall(wbReal, name, fn);
}
static sqlite3_syscall_ptr wbGetSystemCall(sqlite3_vfs *v, const char *name) {
  (void)v;
  return wbReal->xGetSystemCall(wbReal, name);
}
static const char *wbNextSystemCall(sqlite3_vfs *v, const char *name) {
  (void)v;
  return wbReal->xNextSystemCall(wbReal, name);
}

static void wbFillMethods(void) {
  for (int i = 0; i < 3; i++) {
    sqlite3_io_methods *m = &wbMethods[i];
    m->iVersion = i + 1;
    m->xClose = wbClose;
    m->xRead = wbRead;
    m->xWrite = wbWrite;
    m->xTruncate = wbTruncate;
    m->xSync = wbSync;
    m->xFileSize = wbFileSize;
    m->xLock = wbLock;
    m->xUnlock = wbUnlock;
    m->xCheckReservedLock = wbCheckReservedLock;
    m->xFileControl = wbFileControl;
    m->xSectorSize = wbSectorSize;
    m->xDeviceCharacteristics = wbDeviceCharacteristics;
    if (i >= 1) {
      m->xShmMap = wbShmMap;
      m->xShmLock = wbShmLock;
      m->xShmBarrier = wbShmBarrier;
      m->xShmUnmap = wbShmUnmap;
    }
    if (i >= 2) {
      m->xFetch = wbFetch;
      m->xUnfetch = wbUnfetch;
    }
  }
}

__attribute__((visibility("default"))) int sqlite3_walbuf_init(sqlite3 *db, char **err, const sqlite3_api_routines *api) {
  (void)db;
  SQLITE_EXTENSION_INIT2(api);
  /* Loaded before (by another connection or thread): the library stays, nothing to do. */
  if (sqlite3_vfs_find(WB_VFS_NAME)) return SQLITE_OK_LOAD_PERMANENTLY;
  wbReal = sqlite3_vfs_find(0);
  if (!wbReal) {
    *err = sqlite3_mprintf("parley-walbuf: no default VFS");
    return SQLITE_ERROR;
  }
  if (wbReal->iVersion < 3) {
    *err = sqlite3_mprintf("parley-walbuf: the default VFS is version %d, 3 needed", wbReal->iVersion);
    return SQLITE_ERROR;
  }
  wbFillMethods();
  wbVfs.iVersion = 3;
  wbVfs.szOsFile = (int)sizeof(WbFile) + wbReal->szOsFile;
  wbVfs.mxPathname = wbReal->mxPathname;
  wbVfs.zName = WB_VFS_NAME;
  wbVfs.xOpen = wbOpen;
  wbVfs.xDelete = wbDelete;
  wbVfs.xAccess = wbAccess;
  wbVfs.xFullPathname = wbFullPathname;
  wbVfs.xDlOpen = wbDlOpen;
  wbVfs.xDlError = wbDlError;
  wbVfs.xDlSym = wbDlSym;
  wbVfs.xDlClose = wbDlClose;
  wbVfs.xRandomness = wbRandomness;
  wbVfs.xSleep = wbSleep;
  wbVfs.xCurrentTime = wbCurrentTime;
  wbVfs.xGetLastError = wbGetLastError;
  wbVfs.xCurrentTimeInt64 = wbCurrentTimeInt64;
  wbVfs.xSetSystemCall = wbSetSystemCall;
  wbVfs.xGetSystemCall = wbGetSystemCall;
  wbVfs.xNextSystemCall = wbNextSystemCall;
  int rc = sqlite3_vfs_register(&wbVfs, 1);
  return rc == SQLITE_OK ? SQLITE_OK_LOAD_PERMANENTLY : rc;
}
