"""The Redis source kind (`langgraph-checkpoint-redis` stores on a live server), one idea a module.

- `source`: `RedisSource` and its reader, thread by thread, consistent without a snapshot;
- `documents`: the savers' documents, and each as the row the shared decoding takes.

>>> from loaders.redis.source import RedisSource
>>> RedisSource.kind
'redis'
"""
