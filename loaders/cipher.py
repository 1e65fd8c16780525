"""Decryption of values written by LangGraph's `EncryptedSerializer` (contract §2.3, §7.7).

`EncryptedSerializer.from_pycryptodome_aes()` tags a value `<tag>+aes` (say
`msgpack+aes`) and stores `nonce(16) + tag(16) + ciphertext`, AES in EAX mode
with the key from `LANGGRAPH_AES_KEY` (its UTF-8 bytes, 16, 24 or 32 of them).
This module holds the key a load was given and turns such a value back into
`(inner tag, plaintext)`, which `loaders.decode` then decodes like any other.
EAX is authenticated: a wrong key or a changed byte fails the tag check, and
that is a row error naming the failure, never garbage. The cipher is
pycryptodome's (the library the saver itself uses), imported only when an
encrypted value is met.

The key never leaves this module as text: `AesKey` shows itself as
`AesKey(<16 bytes>)`, and no message names more than its length.

>>> key = AesKey(b"0123456789abcdef")
>>> key
AesKey(<16 bytes>)
>>> with using(key):
...     decrypt("msgpack+aes", _encrypt(key, b"\\x01"))
('msgpack', b'\\x01')
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from loaders.records import LoadError, SourceError, ThreadBundle

ENV_VAR = "LANGGRAPH_AES_KEY"  # the variable `from_pycryptodome_aes` reads
KEY_SIZES = (16, 24, 32)
CIPHERS = ("aes",)  # the cipher names this module decrypts
NONCE_BYTES = TAG_BYTES = 16
HINT = f"pass the key with --aes-key-file or {ENV_VAR}"


class CipherError(ValueError):
    """An encrypted value that cannot be decrypted (no key, wrong key, damage); says why."""


class AesKey:
    """An AES key (16, 24 or 32 bytes) that never shows its bytes.

    >>> AesKey(b"short")
    Traceback (most recent call last):
    ...
    loaders.records.SourceError: an AES key must be 16, 24 or 32 bytes long, not 5
    """

    __slots__ = ("_key",)

    def __init__(self, key: bytes) -> None:
        if len(key) not in KEY_SIZES:
            raise SourceError(f"an AES key must be 16, 24 or 32 bytes long, not {len(key)}")
        self._key = bytes(key)

    def __repr__(self) -> str:
        return f"AesKey(<{len(self._key)} bytes>)"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AesKey) and other._key == self._key

    def __hash__(self) -> int:
        return hash((AesKey, len(self._key)))

    def __reduce__(self):
        # (A split load hands the key to its worker processes, over a pipe of this machine.)
        return (AesKey, (self._key,))

    def secret(self) -> bytes:
        return self._key


#: The largest file read as a key file (a key is 16 to 32 bytes, a line end, perhaps hex): anything
#: bigger is refused before it is read, as is anything but a regular file (a FIFO would hang the read,
#: a device like /dev/zero never end).
MAX_KEY_FILE_BYTES = 256


def key_from_file(path: str | os.PathLike[str]) -> AesKey:
    """The key in a file: its bytes as they are when 16, 24 or 32 long, else without one
    trailing newline (a key written with `echo`). Errors name the file, never its content;
    a file that is not a regular file, or is over MAX_KEY_FILE_BYTES, is refused unread."""
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer; fstat then refuses it.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise SourceError(f"{path}: cannot read the AES key file ({exc.strerror or exc})") from None
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise SourceError(f"{path}: the AES key file is not a regular file")
        raw = fh.read(MAX_KEY_FILE_BYTES + 1)
    if len(raw) > MAX_KEY_FILE_BYTES:
        raise SourceError(f"{path}: the AES key file is over {MAX_KEY_FILE_BYTES} bytes: not a key")
    if len(raw) not in KEY_SIZES:
        raw = raw[:-2] if raw.endswith(b"\r\n") else raw[:-1] if raw.endswith(b"\n") else raw
    try:
        return AesKey(raw)
    except SourceError as exc:
        raise SourceError(f"{path}: {exc}") from None


class KeyProblem:
    """A key that cannot be used (`LANGGRAPH_AES_KEY` of a wrong length): a store without
    encrypted values loads as ever, and each encrypted value is a row error saying why."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def __repr__(self) -> str:
        return f"KeyProblem({self.reason!r})"


def key_from_env(env: Mapping[str, str] | None = None) -> AesKey | KeyProblem | None:
    """The key in `LANGGRAPH_AES_KEY` (its UTF-8 bytes, as the saver reads it); None when unset.

    >>> key_from_env({"LANGGRAPH_AES_KEY": "0123456789abcdef"}), key_from_env({"LANGGRAPH_AES_KEY": "short"})
    (AesKey(<16 bytes>), KeyProblem('LANGGRAPH_AES_KEY: an AES key must be 16, 24 or 32 bytes long, not 5'))
    """
    text = (os.environ if env is None else env).get(ENV_VAR)
    if not text:
        return None
    try:
        return AesKey(text.encode("utf-8", "surrogateescape"))
    except SourceError as exc:
        return KeyProblem(f"{ENV_VAR}: {exc}")


def resolve_key(key_file: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None) -> AesKey | KeyProblem | None:
    """The key a load uses: the file's when one is named, else `LANGGRAPH_AES_KEY`'s, else None."""
    return key_from_file(key_file) if key_file is not None else key_from_env(env)


_current: AesKey | KeyProblem | None = None


@contextmanager
def using(key: AesKey | KeyProblem | None) -> Iterator[None]:
    """Decrypt with `key` inside the block (None: no key; encrypted values are reported)."""
    global _current
    before, _current = _current, key
    try:
        yield
    finally:
        _current = before


def current() -> AesKey | KeyProblem | None:
    return _current


def decrypt(type_tag: str, data: bytes) -> tuple[str, bytes]:
    """`(inner tag, plaintext)` of an `EncryptedSerializer` value; `CipherError` says why not."""
    inner, _, cipher = type_tag.partition("+")
    if cipher not in CIPHERS:
        raise CipherError(f"encrypted value ({type_tag!r:.60}) not decrypted: unknown cipher {cipher!r:.20}")
    if not inner or "+" in cipher:
        raise CipherError(f"encrypted value ({type_tag!r:.60}) not decrypted: not a <type>+<cipher> tag")
    key = _current
    if key is None:
        raise CipherError(f"encrypted value ({type_tag!r:.60}) not decrypted: no key given ({HINT})")
    if isinstance(key, KeyProblem):
        raise CipherError(f"encrypted value ({type_tag!r:.60}) not decrypted: {key.reason}")
    if len(data) < NONCE_BYTES + TAG_BYTES:
        raise CipherError(f"encrypted value ({type_tag!r:.60}) not decrypted: {len(data)} bytes, shorter than "
                          f"the {NONCE_BYTES}-byte nonce and {TAG_BYTES}-byte tag")
    from Crypto.Cipher import AES  # pycryptodome: imported when a store holds encrypted values

    data = bytes(data)
    nonce, tag, body = data[:NONCE_BYTES], data[NONCE_BYTES:NONCE_BYTES + TAG_BYTES], data[NONCE_BYTES + TAG_BYTES:]
    try:
        plaintext = AES.new(key.secret(), AES.MODE_EAX, nonce=nonce).decrypt_and_verify(body, tag)
    except ValueError as exc:  # "MAC check failed"
        raise CipherError(f"encrypted value ({type_tag!r:.60}) not decrypted: AES-EAX {exc} "
                          "(a wrong key, or the value was changed)") from None
    return inner, plaintext


def missing_key(reason: str) -> bool:
    """Whether a row error says an encrypted value met no key (`one_hint_per_thread` counts them)."""
    return reason.endswith(f"no key given ({HINT})")


def one_hint_per_thread(bundle: ThreadBundle) -> ThreadBundle:
    """`bundle` with its "no key given" row errors folded into one, where the first was
    (a thread of an encrypted store without its key would give one per row); the others stay.

    >>> e = LoadError("t", "", "c1", "checkpoint", "encrypted value ('msgpack+aes') not decrypted: no key given (" + HINT + ")")
    >>> [x.reason for x in one_hint_per_thread(ThreadBundle("t", [], errors=[e, e])).errors]
    ['2 encrypted values (msgpack+aes) not decrypted: no key given (pass the key with --aes-key-file or LANGGRAPH_AES_KEY)']
    """
    errors = bundle.errors
    if not errors:
        return bundle
    missing = [e for e in errors if missing_key(e.reason)]
    if len(missing) < 2:
        return bundle
    tags = sorted({m.group(1) for e in missing if (m := _TAG.search(e.reason))})
    first = missing[0]
    folded = LoadError(bundle.thread_id, None, None, first.stage,
                       f"{len(missing)} encrypted values ({', '.join(tags)}) not decrypted: no key given ({HINT})")
    at = errors.index(first)
    errors[:] = [e for e in errors[:at] if not missing_key(e.reason)] + [folded] + [
        e for e in errors[at:] if not missing_key(e.reason)]
    return bundle


_TAG = re.compile(r"encrypted value \('([^']{1,60})'\)")


def _encrypt(key: AesKey, plaintext: bytes) -> bytes:
    """What `from_pycryptodome_aes` stores (for tests and examples)."""
    from Crypto.Cipher import AES

    cipher = AES.new(key.secret(), AES.MODE_EAX)
    body, tag = cipher.encrypt_and_digest(plaintext)
    return cipher.nonce + tag + body
