"""Random hex tokens (entry ids, lock nonces) straight from os.urandom.

This is what `secrets.token_hex` does; importing `secrets` also imports random, hmac and hashlib,
about 8 ms of the start of every memory command and lock user for one call.
"""

import os


def token_hex(nbytes: int) -> str:
    return os.urandom(nbytes).hex()
