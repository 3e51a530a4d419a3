"""argv as capture writes it: options and their values read as pairs, with the program they
belong to (mysql's -p), the next argument whole, a shell line's next word; what says where a
secret comes from stays, so the command still runs."""
from __future__ import annotations

from collections import Counter

import pytest

from runner.capture.argv import mask_options


@pytest.mark.parametrize(("argv", "want"), [
    (["tool", "--password", "hunter2", "run"], ["tool", "--password", "<redacted:option-value>", "run"]),
    (["tool", "--token=abc", "--api-key", "k1"], ["tool", "--token=<redacted:option-value>", "--api-key",
                                                  "<redacted:option-value>"]),
    (["tool", "--db-pass", "p4"], ["tool", "--db-pass", "<redacted:option-value>"]),
    (["mysql", "-uroot", "-pSECRET", "db"], ["mysql", "-uroot", "-p<redacted:option-value>", "db"]),
    (["mysql", "-p", "db"], ["mysql", "-p", "db"]),  # mysql asks; the next word is the database
    (["redis-cli", "-a", "pw1234"], ["redis-cli", "-a", "<redacted:option-value>"]),
    (["/usr/bin/curl", "-u", "me:pw", "https://h"], ["/usr/bin/curl", "-u", "<redacted:option-value>", "https://h"]),
    (["sh", "-c", "mysql -pS3cret db && pytest -pno:cacheprovider"],
     ["sh", "-c", "mysql -p<redacted:option-value> db && pytest -pno:cacheprovider"]),
    (["sh", "-c", "tool --password 'my pass phrase' --x"], ["sh", "-c", "tool --password <redacted:option-value>   --x"]),
    (["pytest", "-pno:cacheprovider", "-p", "xdist"], ["pytest", "-pno:cacheprovider", "-p", "xdist"]),
    (["docker", "login", "--password-stdin", "reg.example.com"], ["docker", "login", "--password-stdin",
                                                                   "reg.example.com"]),
    (["tool", "--token-file", "t.txt", "--no-password", "x"], ["tool", "--token-file", "t.txt", "--no-password", "x"]),
    (["tool", "--password"], ["tool", "--password"]),
    # the next argument is the value whole, spaces and all; in a shell line, the next word (above)
    (["deploy", "--password", "my pass phrase", "x"], ["deploy", "--password", "<redacted:option-value>", "x"]),
    (["keytool", "-storepass", "hunter2", "-keypass", "k2"], ["keytool", "-storepass", "<redacted:option-value>",
                                                             "-keypass", "<redacted:option-value>"]),
    (["openssl", "pkcs12", "-passin", "pass:hunter2", "-passout", "env:PW", "-pass", "stdin"],
     ["openssl", "pkcs12", "-passin", "pass:<redacted:option-value>", "-passout", "env:PW", "-pass", "stdin"]),
    (["gpg", "--batch", "--passphrase", "correct horse", "-d"], ["gpg", "--batch", "--passphrase",
                                                                 "<redacted:option-value>", "-d"]),
    (["gcc", "-pthread", "-pedantic", "x.c"], ["gcc", "-pthread", "-pedantic", "x.c"]),  # -p is not -p everywhere
    (["sh", "-c", 'mysql --password "$DB_PASS" db'], ["sh", "-c", 'mysql --password "$DB_PASS" db']),  # stays runnable
    (["t", "--token", "${tok}", "--password", "$ecret1"], ["t", "--token", "${tok}", "--password",
                                                           "<redacted:option-value>"]),  # not a variable as written
])
def test_options_and_their_secret_values(argv: list[str], want: list[str]) -> None:
    counts: Counter[str] = Counter()
    assert mask_options(argv, counts) == want
    assert counts["option-value"] == sum(w.count("<redacted:") for w in want)
