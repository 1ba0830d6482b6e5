import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { WRITER_PAUSE_REASONS } from '@parley/store';
import type { OpsInputs } from './ops.ts';

/** The buckets of the embedded writer's histograms, s: a commit's or a pause's share of the sends' latency shows from a few ms. */
export const WRITER_BUCKETS_S = [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1];

/** A cumulative counter the server keeps as a plain number. */
interface CounterSource {
  name: string;
  help: string;
  read(): number;
}

/**
 * The node's Prometheus registry: process defaults (CPU, memory, event-loop
 * lag, handles, GC) plus Parley's counters and gauges, read from the same
 * plain numbers the top collector samples. One registry per server, so
 * several servers in one process do not collide.
 */
export function createMetrics(inputs: OpsInputs): Registry {
  const register = new Registry();
  register.setDefaultLabels({ node_id: String(inputs.config.node.id) });
  collectDefaultMetrics({ register, prefix: 'parley_' });
  const s = inputs.send.stats;
  const counters: CounterSource[] = [
    { name: 'parley_sends_total', help: 'Sends received from the gateway and HTTP.', read: () => s.sends },
    { name: 'parley_sendacks_total', help: 'Sends answered with reason success.', read: () => s.acks },
    { name: 'parley_sendack_errors_total', help: 'Sends answered with another reason or failed.', read: () => s.ackErrors },
    { name: 'parley_fanout_errors_total', help: 'Fan-outs that failed after commit.', read: () => s.fanoutErrors },
    { name: 'parley_appends_total', help: 'Message rows committed.', read: () => inputs.queue.stats.rows },
    { name: 'parley_append_batches_total', help: 'Group-commit transactions.', read: () => inputs.queue.stats.batches },
    { name: 'parley_fanout_messages_total', help: 'Committed messages fanned out.', read: () => inputs.fanout.stats.messages },
    { name: 'parley_deliveries_total', help: 'RECVs handed to online sessions.', read: () => inputs.fanout.stats.deliveries },
    { name: 'parley_auth_failures_total', help: 'CONNECTs refused for bad credentials.', read: () => inputs.gatewayMetrics.authFailures },
    { name: 'parley_gateway_closes_total', help: 'Gateway connections closed.', read: () => inputs.gatewayMetrics.closes },
    {
      name: 'parley_gateway_refused_connections_total',
      help: 'Connections refused at accept because gateway.max_pending_connections had not completed CONNECT.',
      read: () => inputs.gatewayMetrics.refusedConnections,
    },
  ];
  for (const c of counters) {
    let reported = 0;
    new Counter({
      name: c.name,
      help: c.help,
      registers: [register],
      collect() {
        const now = c.read();
        if (now > reported) this.inc(now - reported);
        reported = now;
      },
    });
  }
  new Gauge({
    name: 'parley_connections',
    help: 'Live gateway connections by protocol.',
    labelNames: ['protocol'],
    registers: [register],
    collect() {
      const { total: _total, ...byProtocol } = inputs.connections();
      for (const [protocol, n] of Object.entries(byProtocol)) this.set({ protocol }, n);
    },
  });
  new Gauge({
    name: 'parley_gateway_prelogin_connections',
    help: 'Connections that have not completed CONNECT (bounded by gateway.max_pending_connections).',
    registers: [register],
    collect() {
      this.set(inputs.gatewayMetrics.preLoginConnections());
    },
  });
  new Gauge({
    name: 'parley_append_queue_depth',
    help: 'Messages waiting for the next group commit.',
    registers: [register],
    collect() {
      this.set(inputs.queue.depth);
    },
  });
  new Gauge({
    name: 'parley_append_last_commit_ms',
    help: 'Duration of the latest group commit, ms.',
    registers: [register],
    collect() {
      this.set(inputs.queue.stats.lastCommitMs);
    },
  });
  if (inputs.writerTimings) {
    const commits = new Histogram({
      name: 'parley_store_commit_seconds',
      help: "Embedded store: its writer thread's time on each committed batch of messages (the statements, the commit and its fsync). Every send of the batch, and of the batches behind it, waits for it.",
      buckets: WRITER_BUCKETS_S,
      registers: [register],
    });
    const pauses = new Histogram({
      name: 'parley_store_writer_pause_seconds',
      help: 'Embedded store: times its writer thread stopped committing beside its commits, by reason (wal_restart: the checkpoint that lets the WAL restart; marks: applying latest-send marks). Sends arriving meanwhile wait.',
      labelNames: ['reason'],
      buckets: WRITER_BUCKETS_S,
      registers: [register],
    });
    // Every reason is listed from the start, with zero counts until it first happens.
    for (const reason of WRITER_PAUSE_REASONS) pauses.zero({ reason });
    inputs.writerTimings.onCommit((ms) => commits.observe(ms / 1000));
    inputs.writerTimings.onPause((reason, ms) => pauses.observe({ reason }, ms / 1000));
  }
  return register;
}
