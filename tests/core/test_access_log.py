"""The access log never keeps recall's question or a credential that was in an address."""
import logging
from datetime import timedelta
from pathlib import Path
from types import SimpleNamespace

import pytest
from gunicorn.config import Config

from reviews.logs import loggable_uri

ROOT = Path(__file__).resolve().parents[2]
SECRET = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6"


@pytest.fixture
def access_logger(tmp_path):
    """gunicorn's logger as gunicorn.conf.py configures it, writing its access log to a file."""
    settings = {}
    exec(compile((ROOT / "gunicorn.conf.py").read_text(), "gunicorn.conf.py", "exec"), settings)
    config = Config()
    config.set("accesslog", str(tmp_path / "access.log"))
    config.set("access_log_format", '%(h)s "%(r)s" %(s)s q=%(q)s "%(f)s"')
    logger = settings["logger_class"](config)
    yield logger, tmp_path / "access.log"
    logging.getLogger("gunicorn.access").handlers.clear()


def test_the_question_and_credentials_are_not_in_the_access_log_line(access_logger):
    logger, path = access_logger
    query = f"user_id=alice&q=my+password+is+{SECRET}&token_hint=api_key%3D{SECRET}"
    environ = {
        "REQUEST_METHOD": "GET", "RAW_URI": f"/api/v1/recall?{query}", "PATH_INFO": "/api/v1/recall",
        "QUERY_STRING": query, "SERVER_PROTOCOL": "HTTP/1.1", "REMOTE_ADDR": "127.0.0.1",
        "HTTP_REFERER": f"http://127.0.0.1:8000/audit/recalls/?q={SECRET}",
    }
    response = SimpleNamespace(status="200 OK", sent=12, headers=[])
    request = SimpleNamespace(headers=[("REFERER", environ["HTTP_REFERER"])])
    logger.access(response, request, environ, timedelta(milliseconds=3))
    for handler in logging.getLogger("gunicorn.access").handlers:
        handler.flush()
    line = path.read_text()
    assert "GET /api/v1/recall?user_id=alice&q=[dropped]&token_hint=" in line and " 200 " in line
    assert SECRET not in line and "password" not in line


def test_an_address_without_a_query_is_left_alone():
    assert loggable_uri("/review/") == "/review/"
    assert loggable_uri("/review/?q=") == "/review/?q=[dropped]"
    assert loggable_uri("/review/?field=location&sort=oldest") == "/review/?field=location&sort=oldest"


def test_a_credential_in_the_path_is_not_in_the_access_log_line(access_logger):
    logger, path = access_logger
    raw = "/api/v1/users/password%20is%3A%20hunter2x/portal-link"
    environ = {"REQUEST_METHOD": "POST", "RAW_URI": raw, "PATH_INFO": "/api/v1/users/password is: hunter2x/portal-link",
               "QUERY_STRING": "", "SERVER_PROTOCOL": "HTTP/1.1", "REMOTE_ADDR": "127.0.0.1"}
    logger.access(SimpleNamespace(status="400 Bad Request", sent=80, headers=[]), SimpleNamespace(headers=[]),
                  environ, timedelta(milliseconds=2))
    for handler in logging.getLogger("gunicorn.access").handlers:
        handler.flush()
    line = path.read_text()
    assert '"POST /api/v1/users/' in line and "/portal-link HTTP/1.1" in line and " 400 " in line
    assert "hunter2x" not in line


def test_the_error_log_is_masked(access_logger, tmp_path):
    logger, _ = access_logger
    logger.error("Invalid request from ip=127.0.0.1: %s", "GET /x?password=hunter2x HTTP/1.1")
    # The filter sits on gunicorn's error logger itself, whatever handler it writes to.
    record = logging.LogRecord("gunicorn.error", logging.ERROR, __file__, 1, "bad line %s", ("password: hunter2x",), None)
    assert all(f.filter(record) for f in logging.getLogger("gunicorn.error").filters)
    assert "hunter2x" not in record.getMessage()
