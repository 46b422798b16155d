"""English statements the rule extractor reads (see ``patterns/__init__.py``)."""
import re

from ...models import Kind
from . import EXPLICIT, LATIN_LETTER, NAME_LATIN, SENTENCE, ProjectNaming, skip, statement

SCRIPT = re.compile(r"[A-Za-z]")  # the sentences these statements are tried on
FIRST_PERSON = re.compile(r"(?i)(?<![A-Za-z])(?:i|i'm|i’m|i've|my|me)(?![A-Za-z])")
# A speaker introducing themselves without "I": "Keanu here, a mobile developer based in Gdańsk".
SELF_REFERENCE = re.compile(r"(?i)(?<![A-Za-z])(?:i|i'm|i’m|i've|my|me)(?![A-Za-z])|\b(?:here|speaking)\b,")

_PLACE = r"(?P<v>[A-Z][\w.'-]+(?:[ ]+[A-Z][\w.'-]+){0,3})"
_NAME = r"(?P<v>" + NAME_LATIN + ")"
_NOT_A_LETTER = r"(?!" + LATIN_LETTER + r"|['’-])"
_HONORIFIC = r"(?:Dr|Prof|Mr|Mrs|Ms|Mx|Miss|Sir|Dame)\.?"
_NOT_NAMES = frozenset({"not", "just", "great", "fine", "good", "it", "the", "a", "an", "my", "our", "what", "how",
                        "mr", "mrs", "ms", "mx", "dr", "prof", "miss", "sir", "dame"})
# "I'm Not sure", "I am Based in…": capitalised words that are not names.
_NOT_NAME_WORDS = (
    "Not", "Also", "Just", "Really", "So", "Very", "Going", "Trying", "Working", "Looking", "Sorry", "Glad",
    "Happy", "Here", "Back", "Fine", "Good", "Okay", "Ok", "Still", "Currently", "Now", "In", "At", "A", "An",
    "The", "From", "Based", "Living", "Learning", "Using", "Building", "Done", "Sure", "Thinking", "Afraid",
    "Interested", "New", "Moving", "Responsible", "Ready", "Curious", "Stuck", "Writing", "Planning",
)
_FULL_NAME = (r"(?P<v>(?!(?:" + "|".join(_NOT_NAME_WORDS) + r")" + _NOT_A_LETTER + ")" + NAME_LATIN
              + r"(?:\s" + NAME_LATIN + r")?)")
_FIRST_NAME = r"(?P<v>(?!(?:" + "|".join(_NOT_NAME_WORDS) + r")" + _NOT_A_LETTER + ")" + NAME_LATIN + r")"
# A name as a title addresses its bearer: "I'm Dr. Adeyemi" is Dr. Adeyemi.
_TITLED_NAME = r"(?P<v>" + _HONORIFIC + r"\s+" + NAME_LATIN + r"(?:\s" + NAME_LATIN + r")?)"
# What someone does for a living, found by its head word: the last word of the phrase names a
# person by what they do (-ist, -er, -ian, "chef", "midwife"), not a fan, a user or a beginner.
_OCCUPATION = (
    r"(?:[A-Za-z][\w-]*\s+){0,3}?(?!(?:beginner|fan|user|member|customer|believer|lover|follower|reader|owner|"
    r"winner|loser|partner|newcomer|outsider|insider|foreigner|stranger|fighter|napper|gamer|dreamer|talker|"
    r"sleeper|eater|drinker|smoker|runner|walker|person|human|adult|minor|parent|mother|father|other)\b)"
    r"\b[a-z-]*(?:ist|ian|er|or|ant|ent|ic|wife|man|woman|chef|pilot|nurse|coach|clerk|agent|officer|cook|"
    r"guard|medic|lead|intern|sre|cto|ceo)\b"
)
OCCUPATION_HEAD = _OCCUPATION[_OCCUPATION.index("(?!"):]  # the last word alone
# Where the phrase of a role ends: a place, an employer or the end of the clause.
_ROLE_END = r"(?=\s+(?:living|based|located|in|at|for|from|with|who|and|by|since|now|here)\b|\s*[,.;!。，]|\s*$)"
_ROLE_NOUNS = (
    r"(?:engineer|developer|programmer|manager|designer|scientist|analyst|architect|lead|student(?! loan)|teacher|"
    r"professor|consultant|researcher|writer|founder|co-founder|cto|ceo|cfo|administrator|admin|doctor|nurse|"
    r"lawyer|accountant|marketer|intern|sre|editor|translator|product owner)"
)
_ORG = r"[A-Z][\w&.'-]*(?:\s+[A-Z][\w&.'-]*){0,2}"
_A_ROLE = r"(?i:\b(?:an?))\s+(?:[A-Za-z-]+\s+){0,3}?(?i:" + _ROLE_NOUNS + r")\b"
_HEALTH = (
    r"(?i)\b(?:diabet\w*|asthma|allerg\w*|depress\w*|anxiety disorder|cancer|tumou?r|pregnan\w*|insomnia|"
    r"diagnos\w*|migraine|blood pressure|hypertension|surgery|medication|chronic \w+|adhd|insulin)\b"
)
_LEGAL = (
    r"(?i)\b(?:lawsuit|sued|suing|sue|court(?! interpreter| reporter| clerk)|attorney|litigation|settlement|custody|divorce|arbitration|"
    r"legal dispute|legal case|landlord dispute)\b"
)
NOT_AN_ORGANIZATION = ("a ", "an ", "some ")

STATEMENTS = [
    # health and legal matters (sensitive): the sentence that says it
    statement("health", _HEALTH, requires=FIRST_PERSON, takes=SENTENCE, first_of="health"),
    statement("legal_matter", _LEGAL, requires=FIRST_PERSON, takes=SENTENCE),
    # name
    statement("name", r"(?i:(?<![A-Za-z])(?:i'm|i’m|i am|this is|call me))\s+" + _TITLED_NAME,
              ("i'm", "i’m", "i am", "this is", "call me"), first_of="en-name"),
    statement("name", r"(?i:\bmy name is)\s+" + _FULL_NAME, "name", requires=FIRST_PERSON, confidence=EXPLICIT,
              first_of="en-name"),
    statement("name", r"(?i:\bcall me)\s+" + _FIRST_NAME, "call me", requires=FIRST_PERSON, first_of="en-name"),
    statement("name", r"(?i:(?<![A-Za-z])(?:i'm|i’m|i am))\s+" + _FULL_NAME + r"(?=\s*(?:[,.!;]|$))",
              ("i'm", "i’m", "i am"), requires=FIRST_PERSON, first_of="en-name"),
    statement("name", r"(?i:(?<![A-Za-z])(?:i'm|i’m|i am|this is))\s+" + _FIRST_NAME + r"\b",
              ("i'm", "i’m", "i am", "this is"), requires=FIRST_PERSON, first_of="en-name"),
    statement("name", r"(?i:\bi go by|\b(?:people|everyone|friends) call me|^name['’]s)\s+" + _FIRST_NAME,
              ("go by", "call me", "name's", "name’s"), first_of="en-name"),
    # by position: "Keanu here, …", "Hey, Tenzin speaking."
    # (a word in capitals is a signature or a shout, "ALICE here again", not an introduction)
    statement("name", r"^(?:(?i:hi|hello|hey)(?i: there| all| everyone)?[,!]?\s+)?(?![A-Z]{2,}\b)" + _FULL_NAME
              + r"\s+(?i:here|speaking)\b",
              ("here", "speaking"), first_of="en-name"),
    # role, and where: "a data engineer at Acme", "my job title is…"
    statement("role", r"(?i:\b(?:an?))\s+(?P<v>(?:[A-Za-z-]+\s+){0,3}?(?i:" + _ROLE_NOUNS + r"))\b", (" a ", " an "),
              requires=FIRST_PERSON, first_of="en-role"),
    statement("role", r"(?i:\b(?:i'm|i am|i’m|i've been|i have been|(?:work|working|employed|trained) as)\s+an?)\s+"
              r"(?P<v>" + _OCCUPATION + ")" + _ROLE_END, (" a ", " an "), requires=FIRST_PERSON, first_of="en-role"),
    statement("role", r"(?i:\b(?:here|speaking|i'm \w+|i am \w+),\s+an?)\s+(?P<v>" + _OCCUPATION + ")" + _ROLE_END,
              (" a ", " an "), requires=SELF_REFERENCE, first_of="en-role"),
    statement("role", r"(?i:\bmy (?:role|job title|job|position) is)\s+(?:an?\s+)?(?P<v>[\w -]{3,40}?)(?=[,.;!]|$)",
              "my ", requires=FIRST_PERSON, first_of="en-role"),
    statement("name", _A_ROLE + r"\s+(?i:at|for|with)\s+(?P<v>" + _ORG + ")", (" a ", " an "), requires=FIRST_PERSON,
              entity="organization"),
    statement("name", r"(?i:\bi\s+(?:work|am working|'m working)\s+(?:at|for))\s+(?P<v>" + _ORG + ")", " work",
              requires=FIRST_PERSON, entity="organization"),
    # location
    statement("location", r"(?i:\bi\s+(?:just\s+|recently\s+)?(?:moved|relocated))\s+to\s+" + _PLACE, (" to ",),
              requires=FIRST_PERSON, supersedes=True, first_of="en-location"),
    statement("location", r"(?i:\bi\s+now\s+live)\s+in\s+" + _PLACE, (" in ",), requires=FIRST_PERSON,
              supersedes=True, first_of="en-location"),
    statement("location", r"(?i:\bi\s+(?:live|am living|'m living|reside))\s+in\s+" + _PLACE, (" in ",),
              requires=FIRST_PERSON, first_of="en-location"),
    statement("location", r"(?i:\bi'?m\s+based|\bi\s+am\s+based)\s+in\s+" + _PLACE, (" in ",), requires=FIRST_PERSON,
              first_of="en-location"),
    # the parts: I + a verb of living or moving + in/to + a place
    statement("location", r"(?i:\b(?:i|we)(?:'ve|'m|'re| have| am| are)?\s+(?:(?:just|recently|currently|now|been|"
              r"finally|happily)\s+)*(?:live|living|reside|residing|stay|staying|settled|relocated|moved|based|located)"
              r"(?:\s+(?:down|out|over|back|away))?\s+(?:in|to))\s+" + _PLACE, (" in ", " to "), first_of="en-location"),
    statement("location", r"(?i:\bi\s+(?:now\s+)?call)\s+" + _PLACE + r"\s+(?i:home)\b", "home", first_of="en-location"),
    statement("location", r"(?i:\b(?:living|based|located|residing|staying)\s+in)\s+" + _PLACE, (" in ",),
              requires=SELF_REFERENCE, first_of="en-location"),
    statement("location", r"(?i:\bhome(?: for me)? is(?: in)?)\s+" + _PLACE, "home", requires=SELF_REFERENCE,
              first_of="en-location"),
    statement("location", r"(?i:\bi work as an?\s+[\w -]+?\s+in)\s+" + _PLACE, "work as", first_of="en-location"),
    # language
    statement("language", r"(?i:\bmy (?:native|first|mother) (?:language|tongue) is)\s+(?P<v>[A-Z][a-z]+)",
              ("language", "tongue"), requires=FIRST_PERSON, first_of="en-language"),
    statement("language", r"(?i:\bi speak)\s+(?P<v>[A-Z][a-z]+)", "speak", requires=FIRST_PERSON, first_of="en-language"),
    statement("language", r"(?P<v>[A-Z][a-z]+) (?i:is my (?:native|first|mother) (?:language|tongue))",
              ("language", "tongue"), first_of="en-language"),
    statement("language", r"(?i:\bi grew up speaking)\s+(?P<v>[A-Z][a-z]+)", "grew up", first_of="en-language"),
    statement("language", r"(?P<v>[A-Z][a-z]+) (?i:is (?:what|the language) i grew up (?:speaking|with))", "grew up",
              first_of="en-language"),
    # a pen name
    statement("relation:pen_name", r"(?i:\bmy pen ?name is)\s+(?P<v>" + NAME_LATIN + r"(?:\s" + NAME_LATIN + r")?)",
              ("pen name", "penname"), kind=Kind.RELATION, first_of="pen_name"),
    statement("relation:pen_name", r"(?i:\bi write (?:under the (?:pen )?name|as))\s+(?P<v>" + NAME_LATIN + r"(?:\s"
              + NAME_LATIN + r")?)", ("write under", "write as"), kind=Kind.RELATION, first_of="pen_name"),
    # Organisations joined: "I just joined Contoso", "I'm employed by Hooli".
    statement("name", r"(?i:\bi(?: just)? joined|\bi(?:'m| am) employed by)\s+(?P<v>" + _ORG + ")",
              ("joined", "employed by"), entity="organization"),
    # more ways of giving a name, a role, a place
    statement("name", r"(?i:\bcall me)\s+" + _NAME + r"\b", "call me", not_values=_NOT_NAMES),
    statement("name", r"^(?:(?i:hi|hello|hey)[,!]?\s+)?(?i:this is)\s+" + _FULL_NAME + r"\s+(?i:from|at|here|speaking)\b",
              "this is", first_of="en-name"),
    statement("name", r"(?i:\bthis is)\s+" + _NAME + r"\s*[.!]?$", "this is", not_values=_NOT_NAMES),
    statement("name", r"(?i:\bmy name['’]s)\s+" + _NAME, ("name's", "name’s"), not_values=_NOT_NAMES),
    statement("location", r"(?i:\bliving in)\s+" + _PLACE, "living in"),
    statement("location", r"(?i:\bi(?:'m| am) (?:planning|going|thinking about|hoping) to move to)\s+" + _PLACE,
              "to move to", kind=Kind.PLAN),
    statement("location", r"(?i:\b(?:we|i) moved to)\s+" + _PLACE, "moved to", supersedes=True),
    statement("location", r"(?i:\bbut i live in)\s+" + _PLACE, "but i live in"),
    statement("role", r"(?i:\bi (?:recently |just )?became an?)\s+(?P<v>[a-z][\w -]{2,40}?)(?=[,.;!]|$)", "became"),
    statement("role", r"(?i:\bi work as an?)\s+(?P<v>[a-z][\w -]{2,40}?)" + _ROLE_END, "work as"),
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

# "our billing service", "the Flask migration project".
PROJECT = ProjectNaming(
    pattern=re.compile(
        r"(?i:\b(?:our|my|the))\s+(?P<name>(?:[A-Za-z0-9][\w.+-]*\s+){0,2}?[A-Za-z0-9][\w.+-]*)\s+"
        r"(?P<kind>(?i:project|service|app|application|system|platform|backend|api|website|pipeline))\b"
    ),
    guard=("project", "service", "app", "system", "platform", "backend", "api", "website", "pipeline"),
    joiner=" ",
    not_names=frozenset({"new", "whole", "same", "other", "main", "current", "old", "this", "that", "entire"}),
)

# Word boundaries are factored out of the alternations (r"\b(?:a|b)", not r"\ba|\bb"): the
# regular expression engine then tries the words only where a word starts, four times faster.
MARKERS = {
    "plan": r"\b(?:might\b|may\b|plan(?:ning)? to\b|thinking (?:about|of)\b|considering\b|going to\b|could switch\b)",
    "correction": r"^(?:correction|update|actually)\b",
    "moved": r"\b(?:moved|migrated|switched|changed|ported|upgraded)\b(?:[^.;]*?)\bto\b|\bnow (?:uses|runs on|on)\b",
    "past": r"\b(?:used to|previously|formerly)\b",
    "uses": r"\b(?:uses?|using|runs? on|running on|built (?:on|with)|backed by|written in|powered by|on|with|stores?|"
            r"keeps?|picked|chose|went with|is (?:mostly|all|entirely|largely|basically|pure))\b",
    "works_on": r"\bi\s+(?:work on|am working on|'m working on|lead|maintain|own|run|am responsible for)\b",
    "liking": r"\b(?:prefer|i like|favou?rite)\b",
    "favourite": r"\b(?:prefer|favou?rite)\b",
    "style": r"markdown|\b(?:bullet|short\b|shorter\b|concise|brief|detailed\b|examples?\b|tests?\b|comments?\b|steps\b|"
             r"format|tone\b|formal\b|casual\b|english\b|chinese\b|german\b|type hints\b|plain language\b|emoji|"
             r"tables?\b|lists?\b|summary\b|tl;dr|diagrams?\b|sources\b|cite\b|commands?\b|units\b|metric\b|dates\b|"
             r"yyyy|clock\b|paragraphs?\b|headings?\b|plain text\b|code samples?\b)",
    "request": r"\b(?:please|keep|always|never|prefer|(?:answer|reply|respond) in|answers|replies|responses|this time|"
               r"from now on|don't|do not|avoid|skip|give me|show|add|put|use|i'd rather|cite)\b",
    "one_off": r"\b(?:this time|today|for now|just for this|for this (?:one|answer|question|reply|conversation|chat)|"
               r"right now|this (?:reply|answer|response))\b",
    "request_lead": r"please|just this time|this time|for now|today|from now on|going forward|in future|in the future",
    "self": r"i\s+|i'm\s+|i am\s+",
}
# Two requests in one sentence: "keep it short and always add tests".
REQUEST_SPLIT = re.compile(
    r"\s+and\s+(?=(?:always|never|include|use|add|keep|avoid|don't|do not|write|give|answer|reply)\b)", re.I
)

SKIP = [
    # Someone else's facts: "My friend uses Java", "His name is John".
    skip(r"(?i)^(?:my|our)\s+(?:\w+\s+)?(?:friend|friend's|colleague|wife|husband|partner|brother|sister|mom|mother(?! tongue)|"
         r"dad|father|son|daughter|boss|manager|manager's|cto|ceo|cousin|roommate|neighbou?r|kids?)\b"),
    skip(r"(?i)^(?:he|she|they|his|her|their)\b"),
    # Hypotheticals: "If I moved to Tokyo", "Imagine I live in Oslo".
    skip(r"(?i)^(?:if|suppose|supposing|imagine|what if|assuming|hypothetically)\b"),
    skip(r"(?i)\b(?:in another life|i'd be|i would be|i wish|if only|i dream of)\b"),
    # Jokes: a statement that laughs at itself is not one to remember.
    skip(r"(?i)\b(?:lol|lmao|rofl|haha\w*|jk)\b|😂|🤣|😅"),
]
