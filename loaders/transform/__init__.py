"""One thread's checkpoints → rows of every table (contract §3), one step a module.

The transcript is `state['messages']` of the latest root checkpoint (greatest
checkpoint id in namespace ''). A message's `ts` is that of the oldest root
checkpoint (smallest ts, tie → smallest id; any branch) holding its id. When the
latest root checkpoint does not decode, the transcript is the greatest one that
did, and the `threads` row says so (`stale_reason`).

Why payloads stay bytes until here: a SqliteSaver re-serializes the whole
message list in every checkpoint, so the same payload bytes recur in every
later checkpoint. The reader has numbered the distinct payloads of the thread
(`records.Payloads`), so each checkpoint arrives as an `array` of small ints and
each distinct payload is decoded once per thread, here.

- `thread`: `transform_thread`, the walk over a thread's checkpoints that the others serve,
  and `thread_batches`, its rows as the decode jobs take them (`loaders.jobs`);
- `timestamps`: a checkpoint's `ts` as integer microseconds (`ts_micros`, in C where built);
- `versions`: the thread's distinct payloads decoded once each, equal ones merged;
- `events`: `message_events` between two message lists;
- `rows`: the row of each table from what the walk found (`ThreadRows`, `stale_reason`);
- `limits`: the per-thread limits (metadata length, list entries, events) and their errors.
"""
