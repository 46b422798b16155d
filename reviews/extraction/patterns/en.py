"""English statements the rule extractor reads (see ``patterns/__init__.py``)."""
from ...models import Kind
from . import skip, statement

_PLACE = r"(?P<v>[A-Z][\w.'-]+(?:[ ]+[A-Z][\w.'-]+){0,2})"

_NAME = r"(?P<v>[A-Z][A-Za-z'’-]{1,30})"
_NOT_NAMES = frozenset({"not", "just", "great", "fine", "good", "it", "the", "a", "an", "my", "our", "what", "how"})

STATEMENTS = [
    # name
    statement("name", r"(?i:\bcall me)\s+" + _NAME + r"\b", "call me", not_values=_NOT_NAMES),
    statement("name", r"(?i:\bthis is)\s+" + _NAME + r"\s*[.!]?$", "this is", not_values=_NOT_NAMES),
    statement("name", r"(?i:\bmy name['’]s)\s+" + _NAME, ("name's", "name’s"), not_values=_NOT_NAMES),
    # location
    statement("location", r"(?i:\bliving in)\s+" + _PLACE, "living in"),
    statement("location", r"(?i:\bi(?:'m| am) (?:planning|going|thinking about|hoping) to move to)\s+" + _PLACE,
              "to move to", kind=Kind.PLAN),
    statement("location", r"(?i:\b(?:we|i) moved to)\s+" + _PLACE, "moved to", supersedes=True),
    statement("location", r"(?i:\bbut i live in)\s+" + _PLACE, "but i live in"),
    # role
    statement("role", r"(?i:\bi (?:recently |just )?became an?)\s+(?P<v>[a-z][\w -]{2,40}?)(?=[,.;!]|$)", "became"),
    statement("role", r"(?i:\bi work as an?)\s+(?P<v>[a-z][\w -]{2,40}?)(?=[,.;!]|$)", "work as"),
    statement("role", r"(?i:\bi(?:'m| am) an?)\s+(?P<v>[\w-]+ (?:student|teacher))\b", ("student", "teacher")),
    statement("role", r"(?i:\bi(?:'m| am) a)\s+(?P<v>[a-z]+ engineer) now\b", "engineer now"),
    # finance (sensitive)
    statement("finance", r"(?i)\b(?:i|my)\b.{0,30}?\b(?P<v>mortgage|student loan|loan|debt|salary|income|savings)\b",
              ("mortgage", "loan", "debt", "salary", "income", "savings")),
    # organisation industry: "I work at Umbrella, a biotech company"
    statement("industry", r"(?i:\bi work (?:at|for))\s+[A-Z][\w&.'-]*,\s+an?\s+(?P<v>[a-z][\w-]+(?: [a-z][\w-]+)?)"
              r"\s+(?:company|firm|startup)", ("company", "firm", "startup"), entity="organization"),
    # project status
    statement("status", r"(?i)\bis (?:now )?in production\b", "in production", entity="project", value="in production"),
    statement("status", r"(?i)\bis (?:now )?on hold\b", "on hold", entity="project", value="on hold"),
    statement("status", r"(?i)\blaunched\b", "launched", entity="project", value="launched"),
]

# Organisations joined: "I just joined Contoso", "I'm employed by Hooli".
ORGANIZATION = statement(
    "name", r"(?i:\bi(?: just)? joined|\bi(?:'m| am) employed by)\s+(?P<v>[A-Z][\w&.'-]*(?:\s+[A-Z][\w&.'-]*){0,2})",
    ("joined", "employed by"), entity="organization",
)

SKIP = [
    # Someone else's facts: "My friend uses Java", "His name is John".
    skip(r"(?i)^(?:my|our)\s+(?:\w+\s+)?(?:friend|friend's|colleague|wife|husband|partner|brother|sister|mom|mother(?! tongue)|"
         r"dad|father|son|daughter|boss|manager|manager's|cto|ceo|cousin|roommate|neighbou?r|kids?)\b"),
    skip(r"(?i)^(?:he|she|they|his|her|their)\b"),
    # Hypotheticals: "If I moved to Tokyo", "Imagine I live in Oslo".
    skip(r"(?i)^(?:if|suppose|supposing|imagine|what if|assuming|hypothetically)\b"),
]
