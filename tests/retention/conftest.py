from tests.erasure.conftest import committed  # noqa: F401
from tests.publication.conftest import store  # noqa: F401
