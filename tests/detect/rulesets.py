"""Small rule sets for engine tests (independent of the packaged catalogue)."""

from __future__ import annotations

from tcg.detect.rule import parse_rules_text

ENGINE_RULES = r"""
[[rule]]
id = "tst-token"
category = "secret"
description = "test token"
regex = '''\b(?P<value>tst_[A-Za-z0-9]{20,30})\b'''
keywords = ["tst_"]
entropy = 3.0
[rule.allow]
values = ["tst_AAAAbbbbCCCCddddEEEEffff"]
patterns = ['''(?i)example''']
[rule.examples]
match = ["k=tst_Q8wE2rT5yU7iO9pA3sD6fG", "tst_Zx1Cv2Bn3Mq4Wr5Ty6Ui7Op8"]
no_match = ["tst_exampleexampleexample12", "tst_aaaaaaaaaaaaaaaaaaaaaaaa"]

[[rule]]
id = "tst-assign"
category = "secret"
description = "password assignment"
regex = '''(?i)passwd\s{0,3}=\s{0,3}(?P<value>[A-Za-z0-9_!@#%^&*]{8,40})'''
keywords = ["passwd"]
[rule.examples]
match = ["PASSWD = Hx9!kq2Lm#", "passwd=q1w2e3r4t5"]
no_match = ["passwd = short", "password: Hx9!kq2Lm#"]

[[rule]]
id = "tst-mail"
category = "pii"
description = "mail"
regex = '''\b(?P<value>[A-Za-z0-9._+-]{1,64}@[A-Za-z0-9-]{1,63}\.[a-z]{2,8})\b'''
keywords = ["@"]
[rule.allow]
patterns = ['''@example\.com$''']
[rule.examples]
match = ["ivan@corp.ru", "mail a.b@c-d.org now"]
no_match = ["a@example.com", "no at sign"]

[[rule]]
id = "tst-card"
category = "pii"
description = "card"
regex = '''\b(?P<value>[2-6][0-9]{12,18})\b'''
validator = "iin"
[rule.examples]
match = ["4111111111111111", "pan 5555555555554444."]
no_match = ["4111111111111112", "1234567890123456"]

[[rule]]
id = "tst-pem"
category = "secret"
description = "pem"
regex = '''-----BEGIN (?:RSA |OPENSSH )?PRIVATE KEY-----'''
keywords = ["private key"]
block_end = '''-----END (?:RSA |OPENSSH )?PRIVATE KEY-----'''
[rule.examples]
match = ["-----BEGIN RSA PRIVATE KEY-----\nQUJD\n-----END RSA PRIVATE KEY-----", "-----BEGIN PRIVATE KEY-----"]
no_match = ["-----BEGIN PUBLIC KEY-----", "BEGIN RSA PRIVATE KEY"]

[[rule]]
id = "tst-akia"
category = "secret"
description = "aws key id with folding"
regex = '''\b(?P<value>AKIA[A-Z2-7]{16})\b'''
keywords = ["akia"]
validator = "aws-key-id"
fold = true
[rule.examples]
match = ["AKIAUJZDEGXDNCF32EPF", "x=АKIAUJZDEGXDNCF32EPF"]
no_match = ["AKIAUJZDEGXDNCF32EP", "АKIAUJZDEGXDNCF32EP"]

[[rule]]
id = "tst-ref"
category = "reference"
description = "secret variable reference"
regex = '''\$\{?(?P<value>AWS_SECRET_ACCESS_KEY|GITHUB_TOKEN)\b'''
keywords = ["$aws_secret", "${aws_secret", "$github_token", "${github_token"]
[rule.examples]
match = ["echo $AWS_SECRET_ACCESS_KEY", "curl -H \"token ${GITHUB_TOKEN}\""]
no_match = ["AWS_SECRET_ACCESS_KEY=", "$GITHUB_TOKENS"]
"""


def engine_rules():
    return parse_rules_text(ENGINE_RULES, "test-engine.toml")
