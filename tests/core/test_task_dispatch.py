"""The services hand work to Celery by task name (reviews.background.TaskName), so that
reviews/tasks.py imports the services and never the other way round: each name must stay
the registered name of a task in reviews/tasks.py, or the work would never be sent."""
import pytest

from reviews import tasks
from reviews.background import TaskName, task


@pytest.mark.parametrize("name", list(TaskName))
def test_each_dispatched_name_is_a_task_of_reviews_tasks(name):
    module, _, function = name.rpartition(".")
    assert module == tasks.__name__
    assert task(name).name == getattr(tasks, function).name == name


def test_an_unknown_name_is_not_silently_accepted():
    with pytest.raises(KeyError):
        task("reviews.tasks.no_such_task")
