/*
 * Reads of many TCP sockets taken in one native call per event-loop turn.
 *
 * Node calls JavaScript once per socket read (libuv's read callback, then
 * MakeCallback with its callback scope, V8's entry and the stream's onread).
 * A server that fans a group message out to hundreds of sockets gets their
 * acknowledgements back as hundreds of small reads, often many in one turn of
 * the event loop, and that per-read glue cost more than the JavaScript that
 * handles each read. Here the sockets' descriptors sit in one epoll set of
 * our own, itself watched by one uv_poll in Node's loop: when any of them is
 * readable, one callback reads every ready socket (up to MAX_EVENTS) into one
 * batch buffer and calls JavaScript once with all the reads.
 *
 * The descriptors are Node's own (no dup): Node's reading of each is stopped
 * first (readStop), so the two never read the same socket; Node's handle
 * still writes, and closes. JavaScript removes a descriptor from the set
 * before Node closes it.
 *
 * A batch record is a 4-byte id, a 4-byte count and, when the count is
 * positive, that many bytes, padded to 4: the count is the bytes read, 0 at
 * the end of the stream, or -errno of a failed read. A descriptor whose read
 * ended or failed is taken out of the set here, before the record is
 * delivered.
 */
#include <errno.h>
#include <node_api.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>
#include <uv.h>

/* Ready sockets taken per turn; more stay ready (level-triggered) for the next turn. */
#define MAX_EVENTS 64
/* The most one read takes (as libuv's own read buffer). */
#define READ_MAX 65536
#define HEADER 8
/* The batch buffer holds a whole turn: every ready socket's largest read. */
#define BATCH_BYTES ((size_t)MAX_EVENTS * (HEADER + READ_MAX + 3))

typedef struct {
  napi_env env;
  int epfd;
  uv_poll_t *poll;
  napi_ref callback; /* (count, bytes) => void */
  napi_ref buffer;   /* the batch buffer, kept alive */
  napi_async_context async;
  napi_ref resource;
  uint8_t *batch;
  int open;
} pump_t;

static napi_value throw_errno(napi_env env, const char *what, int err) {
  char msg[128];
  snprintf(msg, sizeof msg, "%s: %s", what, strerror(err));
  napi_throw_error(env, NULL, msg);
  return NULL;
}

static pump_t *pump_of(napi_env env) {
  void *data = NULL;
  napi_get_instance_data(env, &data);
  return (pump_t *)data;
}

static void put_i32(uint8_t *at, int32_t v) { memcpy(at, &v, 4); }

/* Calls JavaScript with the batch's records; exceptions go where an uncaught one would. */
static void deliver(pump_t *p, uint32_t count, size_t bytes) {
  napi_env env = p->env;
  napi_handle_scope scope;
  if (napi_open_handle_scope(env, &scope) != napi_ok) return;
  napi_value cb, resource, argv[2], result;
  napi_get_reference_value(env, p->callback, &cb);
  napi_get_reference_value(env, p->resource, &resource);
  napi_create_uint32(env, count, &argv[0]);
  napi_create_uint32(env, (uint32_t)bytes, &argv[1]);
  if (napi_make_callback(env, p->async, resource, cb, 2, argv, &result) == napi_pending_exception) {
    napi_value err;
    if (napi_get_and_clear_last_exception(env, &err) == napi_ok) napi_fatal_exception(env, err);
  }
  napi_close_handle_scope(env, scope);
}

static void on_ready(uv_poll_t *handle, int status, int events) {
  (void)status;
  (void)events;
  pump_t *p = (pump_t *)handle->data;
  if (!p->open) return;
  struct epoll_event ev[MAX_EVENTS];
  int n;
  do {
    n = epoll_wait(p->epfd, ev, MAX_EVENTS, 0);
  } while (n < 0 && errno == EINTR);
  if (n <= 0) return;
  size_t used = 0;
  uint32_t count = 0;
  for (int i = 0; i < n; i++) {
    int fd = (int)(uint32_t)(ev[i].data.u64 & 0xffffffffu);
    int32_t id = (int32_t)(uint32_t)(ev[i].data.u64 >> 32);
    uint8_t *rec = p->batch + used;
    ssize_t r;
    do {
      r = read(fd, rec + HEADER, READ_MAX);
    } while (r < 0 && errno == EINTR);
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    int32_t got = r >= 0 ? (int32_t)r : -errno;
    if (got <= 0) epoll_ctl(p->epfd, EPOLL_CTL_DEL, fd, NULL);
    put_i32(rec, id);
    put_i32(rec + 4, got);
    used += HEADER + (got > 0 ? (((size_t)got + 3) & ~(size_t)3) : 0);
    count++;
  }
  if (count > 0) deliver(p, count, used);
}

static int ctl(pump_t *p, int op, int fd, int32_t id) {
  struct epoll_event ev;
  memset(&ev, 0, sizeof ev);
  ev.events = EPOLLIN;
  ev.data.u64 = ((uint64_t)(uint32_t)id << 32) | (uint32_t)fd;
  return epoll_ctl(p->epfd, op, fd, &ev) == 0 ? 0 : -errno;
}

static int arg_int32(napi_env env, napi_value v, int32_t *out) {
  napi_valuetype t;
  if (napi_typeof(env, v, &t) != napi_ok || t != napi_number) return 0;
  return napi_get_value_int32(env, v, out) == napi_ok;
}

/* open(buffer: Uint8Array of at least batchBytes, callback(count, bytes)): starts the pump. */
static napi_value js_open(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  pump_t *p = pump_of(env);
  if (p->open) {
    napi_throw_error(env, NULL, "the read pump is open already");
    return NULL;
  }
  bool is_ta = false;
  napi_valuetype t;
  if (argc < 2 || napi_is_typedarray(env, argv[0], &is_ta) != napi_ok || !is_ta || napi_typeof(env, argv[1], &t) != napi_ok ||
      t != napi_function) {
    napi_throw_type_error(env, NULL, "open(buffer: Uint8Array, callback: function)");
    return NULL;
  }
  napi_typedarray_type type;
  size_t length;
  void *data;
  napi_get_typedarray_info(env, argv[0], &type, &length, &data, NULL, NULL);
  if (type != napi_uint8_array || length < BATCH_BYTES) {
    napi_throw_range_error(env, NULL, "the batch buffer must be a Uint8Array of at least batchBytes");
    return NULL;
  }
  int epfd = epoll_create1(EPOLL_CLOEXEC);
  if (epfd < 0) return throw_errno(env, "epoll_create1", errno);
  uv_loop_t *loop;
  napi_get_uv_event_loop(env, &loop);
  uv_poll_t *poll = malloc(sizeof *poll);
  if (poll == NULL || uv_poll_init(loop, poll, epfd) != 0) {
    free(poll);
    close(epfd);
    napi_throw_error(env, NULL, "uv_poll_init failed");
    return NULL;
  }
  poll->data = p;
  napi_value resource, name;
  napi_create_object(env, &resource);
  napi_create_string_utf8(env, "parley.readpump", NAPI_AUTO_LENGTH, &name);
  napi_async_init(env, resource, name, &p->async);
  napi_create_reference(env, resource, 1, &p->resource);
  napi_create_reference(env, argv[1], 1, &p->callback);
  napi_create_reference(env, argv[0], 1, &p->buffer);
  p->env = env;
  p->epfd = epfd;
  p->poll = poll;
  p->batch = data;
  p->open = 1;
  uv_poll_start(poll, UV_READABLE, on_ready);
  /* The sockets keep the loop alive, not the pump. */
  uv_unref((uv_handle_t *)poll);
  return NULL;
}

/*
 * The integer arguments of add (fd, id) and remove (fd): `want` of them, the
 * first a descriptor (>= 0). False, with a TypeError thrown, when they are not.
 */
static int int_args(napi_env env, napi_callback_info info, size_t want, int32_t out[2], const char *usage) {
  size_t argc = 2;
  napi_value argv[2];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  for (size_t i = 0; i < want; i++) {
    if (argc <= i || !arg_int32(env, argv[i], &out[i])) argc = 0;
  }
  if (argc < want || out[0] < 0) {
    napi_throw_type_error(env, NULL, usage);
    return 0;
  }
  return 1;
}

/* add(fd, id): the socket's reads come to the pump (also its resume); 0 or -errno. */
static napi_value js_add(napi_env env, napi_callback_info info) {
  int32_t a[2] = {-1, 0};
  if (!int_args(env, info, 2, a, "add(fd, id): two integers, fd >= 0")) return NULL;
  pump_t *p = pump_of(env);
  if (!p->open) {
    napi_throw_error(env, NULL, "the read pump is not open");
    return NULL;
  }
  napi_value out;
  napi_create_int32(env, ctl(p, EPOLL_CTL_ADD, a[0], a[1]), &out);
  return out;
}

/* remove(fd): the socket's reads no longer come to the pump (also its pause); 0 or -errno (-ENOENT: it was not there). */
static napi_value js_remove(napi_env env, napi_callback_info info) {
  int32_t a[2] = {-1, 0};
  if (!int_args(env, info, 1, a, "remove(fd): an integer fd >= 0")) return NULL;
  pump_t *p = pump_of(env);
  int r = p->open ? (epoll_ctl(p->epfd, EPOLL_CTL_DEL, a[0], NULL) == 0 ? 0 : -errno) : -ENOENT;
  napi_value out;
  napi_create_int32(env, r, &out);
  return out;
}

static void on_poll_closed(uv_handle_t *h) { free(h); }

static void finalize(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  pump_t *p = (pump_t *)data;
  if (p->open) {
    p->open = 0;
    uv_poll_stop(p->poll);
    uv_close((uv_handle_t *)p->poll, on_poll_closed);
    close(p->epfd);
  }
  free(p);
}

static napi_value init(napi_env env, napi_value exports) {
  pump_t *p = calloc(1, sizeof *p);
  if (p == NULL || napi_set_instance_data(env, p, finalize, NULL) != napi_ok) {
    free(p);
    napi_throw_error(env, NULL, "readpump: no memory");
    return NULL;
  }
  p->epfd = -1;
  napi_value fn, v;
  napi_create_function(env, "open", NAPI_AUTO_LENGTH, js_open, NULL, &fn);
  napi_set_named_property(env, exports, "open", fn);
  napi_create_function(env, "add", NAPI_AUTO_LENGTH, js_add, NULL, &fn);
  napi_set_named_property(env, exports, "add", fn);
  napi_create_function(env, "remove", NAPI_AUTO_LENGTH, js_remove, NULL, &fn);
  napi_set_named_property(env, exports, "remove", fn);
  napi_create_uint32(env, (uint32_t)BATCH_BYTES, &v);
  napi_set_named_property(env, exports, "batchBytes", v);
  napi_create_uint32(env, READ_MAX, &v);
  napi_set_named_property(env, exports, "readMax", v);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
