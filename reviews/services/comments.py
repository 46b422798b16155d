"""Comments between reviewers on an item (issue 38.6).

Who may write one is the views' and the API's question (``permissions.can_comment``); this
service checks what any caller must respect: the item is the tenant's, the text is not
empty and not too long. The text arrives screened like every free text (``Text``: a
credential in it is masked before it is stored or audited).
"""
from __future__ import annotations

from django.contrib.auth.base_user import AbstractBaseUser

from .. import audit
from ..actors import Actor
from ..audit import EventDraft
from ..errors import InvalidInput, NotFound
from ..models import AuditAction, Candidate, CandidateComment, Tenant
from ..models.comments import MAX_COMMENT_LENGTH
from ..models.locks import lock_subject
from ..screening import Text
from .boundary import service


@service
def candidate_comment_add(
    *, tenant: Tenant, candidate_id: int, author: AbstractBaseUser | None, body: Text, actor: Actor
) -> CandidateComment:
    """Add a comment by ``actor`` (``author``: the staff member, or None for a review API
    key) to one of the tenant's candidates, audited as
    ``candidate.commented`` on the candidate (the text in the event's payload, so an
    erasure of the subject blanks it with the rest).

    1. Refuse an empty or too long text (400), before anything is read.
    2. Lock the candidate's subject first (models.locks' lock order: the comment's foreign
       key to the candidate is checked at commit, after the chain head otherwise).
    3. Store the comment and record its event.
    """
    text = body.strip()
    if not text:
        raise InvalidInput("A comment cannot be empty.", details={"body": "empty"})
    if len(text) > MAX_COMMENT_LENGTH:
        raise InvalidInput(
            f"A comment is at most {MAX_COMMENT_LENGTH} characters.", details={"body": "too_long"}
        )
    subject_id = Candidate.objects.filter(tenant=tenant, pk=candidate_id).values_list("subject_id", flat=True).first()
    if subject_id is None:
        raise NotFound("No such candidate.")
    subject = lock_subject(subject_id)
    candidate = Candidate.objects.filter(tenant=tenant, pk=candidate_id).first()
    if candidate is None:  # erased while we waited for the subject
        raise NotFound("No such candidate.")
    comment = CandidateComment.objects.create(
        tenant=tenant, candidate=candidate, author=author, actor=str(actor), body=text
    )
    audit.record(
        tenant.pk,
        EventDraft.about(
            "candidate", candidate.pk, AuditAction.CANDIDATE_COMMENTED, subject=subject, actor=actor,
            after={"comment_id": comment.pk, "body": text},
        ),
    )
    return comment
