"""The settings the test suite runs with (pytest.ini): the project's own, on a PostgreSQL
backend whose flush between transactional tests costs milliseconds instead of a second
(tests/postgresql/base.py), and a fast password hasher. Nothing else differs."""
from memory_portal.settings import *  # noqa: F403
from memory_portal.settings import DATABASES, IS_POSTGRES

if IS_POSTGRES:
    DATABASES["default"]["ENGINE"] = "tests.postgresql"

# Django's own advice for test suites: the default hasher's million PBKDF2 rounds cost a
# third of a second per staff member a fixture creates or signs in, in hundreds of tests.
# No test is about the hasher; production keeps the default.
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
