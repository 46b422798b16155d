"""The "my decisions" page: what the signed-in reviewer decided, newest first, with Undo
where it is still allowed (it posts to the item's own undo, the same service as the toast)."""
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.http import require_GET

from ..actors import Actor
from ..selectors.decisions import MY_DECISIONS_SHOWN, my_decisions
from ..services.candidates import UNDO_SECONDS
from .reviewer import staff_view


@require_GET
@staff_view
def my_decisions_page(request):
    decisions = my_decisions(
        tenant=request.tenant, actor=str(Actor.reviewer(request.user)), now=timezone.now(), undo_seconds=UNDO_SECONDS
    )
    context = {"decisions": decisions, "shown": MY_DECISIONS_SHOWN, "can_decide": request.can_decide}
    return render(request, "reviews/my_decisions.html", context)
