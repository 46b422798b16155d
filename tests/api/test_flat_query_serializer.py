"""FlatQuerySerializer validates as DRF's own Serializer does, only cheaper.

It shares one set of bound fields per class, and gives a field the request leaves out its
default without DRF's walk through it. Each case below is validated by a FlatQuerySerializer
and by a plain StrictSerializer with the same fields: the data, or the errors, must be
the same, for a query string (a form, where an absent box is an unticked one) and for a
JSON-like dict.
"""
import pytest
from django.http import QueryDict
from rest_framework import serializers

from reviews.api.base import FlatQuerySerializer, StrictSerializer
from reviews.api.recall import RecallApi


def _no_maybe(value):
    if value is None:
        raise serializers.ValidationError("Yes or no.")


def _declared():
    return {
        "user_id": serializers.CharField(max_length=8),
        "q": serializers.CharField(required=False, allow_blank=True, default=""),
        "tags": serializers.ListField(child=serializers.CharField(max_length=3), required=False, default=list),
        "limit": serializers.IntegerField(min_value=1, max_value=50, required=False, default=10),
        "loud": serializers.BooleanField(required=False, default=False),
        "quiet": serializers.BooleanField(required=False, default=True),
        # DRF validates a form's absent box (its default) when it has validators of its own.
        "strict": serializers.BooleanField(required=False, default=False, validators=[_no_maybe]),
        "note": serializers.CharField(required=False),  # no default: left out of the data
        "level": serializers.IntegerField(required=False, default=1),
    }


def _validate_level(self, value):
    if value > 3:
        raise serializers.ValidationError("At most 3.")
    return value * 100  # visible in the data: the method ran


Flat = type("Flat", (FlatQuerySerializer,), {**_declared(), "validate_level": _validate_level})
Reference = type("Reference", (StrictSerializer,), {**_declared(), "validate_level": _validate_level})

CASES = [
    "user_id=alice",
    "user_id=alice&q=hello",
    "user_id=alice&tags=a&tags=b",
    "user_id=alice&limit=5&loud=true&quiet=false",
    "user_id=alice&quiet=true",
    "user_id=alice&note=hi&level=2",
    "user_id=alice&level=9",
    "user_id=alice&strict=yes",
    "",  # the required field missing
    "q=only",
    "user_id=far-too-long&limit=0&tags=toolong",
    "user_id=alice&unknown=1",
    "user_id=alice&user_id=bob",
    "user_id=alice&limit=",
    "user_id=alice&q=",
]


def _outcome(serializer_class, data):
    serializer = serializer_class(data=data)
    if serializer.is_valid():
        return "valid", dict(serializer.validated_data)
    return "invalid", serializer.errors


@pytest.mark.parametrize("query", CASES)
def test_a_query_string_validates_as_drf_validates_it(query):
    # Twice: the second instance finds the class's fields bound already.
    for _ in range(2):
        assert _outcome(Flat, QueryDict(query)) == _outcome(Reference, QueryDict(query))


@pytest.mark.parametrize("query", CASES)
def test_a_plain_mapping_validates_as_drf_validates_it(query):
    data = QueryDict(query).dict()
    assert _outcome(Flat, data) == _outcome(Reference, data)


def test_left_out_fields_take_their_defaults():
    for data in (QueryDict("user_id=alice"), {"user_id": "alice"}):
        status, validated = _outcome(Flat, data)
        assert status == "valid"
        assert validated == {
            "user_id": "alice", "q": "", "tags": [], "limit": 10, "loud": False, "quiet": True,
            "strict": False,
            "level": 100,  # its validate_level method ran on the default
        }
        assert "note" not in validated


def test_each_request_gets_a_default_list_of_its_own():
    first, second = Flat(data=QueryDict("user_id=a")), Flat(data=QueryDict("user_id=b"))
    assert first.is_valid() and second.is_valid()
    first.validated_data["tags"].append("x")
    assert second.validated_data["tags"] == []


def test_partial_validation_is_refused():
    # The fields are bound to an instance of their own, whose `partial` DRF would read.
    with pytest.raises(TypeError, match="never partial"):
        Flat(data={"q": "x"}, partial=True)


def test_what_a_request_left_out_once_is_validated_when_the_next_sends_it():
    assert _outcome(Flat, QueryDict("user_id=alice"))[0] == "valid"
    assert _outcome(Flat, QueryDict("user_id=alice&limit=99")) == (
        "invalid", {"limit": ["Ensure this value is less than or equal to 50."]})


RECALL_CASES = [
    "user_id=alice",
    "user_id=alice&entity=project:x&entity=person:bob&field=stack",
    "user_id=alice&include_sensitive=true&explain=1&limit=3&thread_id=t-1&q=db",
    "user_id=alice&limit=0",
    "user_id=alice&explain=perhaps",
    "user_id=",
    "user_id=alice&user_id=bob",
    "user_id=alice&entity=project:x&limit=5&limit=6",
    "user_id=alice&format=json",
    "user_id=sk-proj-4fQ9xT2mLr8vKp0aZ7wYc3Hn",
    "user_id=alice&entity=nocolon",
]
RecallReference = type("RecallReference", (StrictSerializer,), dict(RecallApi.InputSerializer._declared_fields))


@pytest.mark.parametrize("query", RECALL_CASES)
def test_the_recall_parameters_validate_as_drf_validates_them(query):
    assert _outcome(RecallApi.InputSerializer, QueryDict(query)) == _outcome(RecallReference, QueryDict(query))


def _valid_data(serializer_class, data):
    """What valid_data must give: the validated data, or None where there are errors."""
    status, outcome = _outcome(serializer_class, data)
    return outcome if status == "valid" else None


Plain = type("Plain", (FlatQuerySerializer,), _declared())
PlainReference = type("PlainReference", (StrictSerializer,), _declared())


@pytest.mark.parametrize("query", CASES)
def test_valid_data_without_an_instance_is_what_an_instance_validates(query):
    assert Plain._binding().plain
    for data in (QueryDict(query), QueryDict(query).dict()):
        assert Plain.valid_data(data) == _valid_data(PlainReference, data)


@pytest.mark.parametrize("query", RECALL_CASES)
def test_recalls_valid_data_is_what_an_instance_validates(query):
    assert RecallApi.InputSerializer._binding().plain
    assert RecallApi.InputSerializer.valid_data(QueryDict(query)) == _valid_data(RecallReference, QueryDict(query))


def test_valid_data_makes_each_default_list_afresh():
    first, second = Plain.valid_data(QueryDict("user_id=a")), Plain.valid_data(QueryDict("user_id=b"))
    first["tags"].append("x")
    assert second["tags"] == []


def _at_most_three_tags(data):
    if len(data.get("tags", [])) > 3:
        raise serializers.ValidationError("Three tags at most.")


class _WithValidate(FlatQuerySerializer):
    user_id = serializers.CharField()

    def validate(self, data):
        if data["user_id"] == "root":
            raise serializers.ValidationError("Not root.")
        return data


@pytest.mark.parametrize("serializer_class,query,expected", [
    (Flat, "user_id=alice&level=2", "level"),  # validate_level ran: 200
    (type("WithMeta", (FlatQuerySerializer,), {**_declared(), "Meta": type("Meta", (), {"validators": [
        _at_most_three_tags]})}), "user_id=alice&tags=a&tags=b&tags=c&tags=d", None),
    (_WithValidate, "user_id=root", None),
    (type("Renamed", (FlatQuerySerializer,), {"user": serializers.CharField(source="owner")}), "user=alice",
     "owner"),
])
def test_a_class_that_validates_more_than_its_fields_is_validated_by_an_instance(serializer_class, query, expected):
    assert not serializer_class._binding().plain
    validated = serializer_class.valid_data(QueryDict(query))
    serializer = serializer_class(data=QueryDict(query))
    assert validated == (dict(serializer.validated_data) if serializer.is_valid() else None)
    if expected is None:
        assert validated is None
    else:
        assert expected in validated


def _ticked(value):
    if value is not True:
        raise serializers.ValidationError("Tick it.")


def test_a_forms_absent_box_with_validators_is_validated_as_drf_does():
    """DRF reads a form's absent box as its default and validates it; a JSON body that
    leaves it out gets the default, unvalidated. The early default must keep both."""
    declared = {"agree": serializers.BooleanField(required=False, default=False, validators=[_ticked])}
    flat = type("FlatAgree", (FlatQuerySerializer,), dict(declared))
    reference = type("ReferenceAgree", (StrictSerializer,), dict(declared))
    assert _outcome(flat, QueryDict("")) == _outcome(reference, QueryDict("")) == ("invalid", {"agree": ["Tick it."]})
    assert _outcome(flat, {}) == _outcome(reference, {}) == ("valid", {"agree": False})
    assert flat.valid_data(QueryDict("")) is None and flat.valid_data({}) == {"agree": False}


def _not_both(data):
    if data.get("loud") and not data.get("quiet", True):
        raise serializers.ValidationError("Loud or quiet, not both.")


def _region_known(data):
    if data["region"] != "eu":
        raise serializers.ValidationError("Unknown region.")


@pytest.mark.parametrize("query", ["user_id=alice", "user_id=alice&loud=true&quiet=false", "user_id=alice&loud=true"])
def test_the_serializers_own_validators_run_as_drf_runs_them(query):
    """Meta.validators see the validated data, read-only defaults included."""
    declared = {**_declared(), "region": serializers.CharField(read_only=True, default="eu")}
    meta = type("Meta", (), {"validators": [_not_both, _region_known]})
    flat = type("FlatChecked", (FlatQuerySerializer,), {**declared, "Meta": meta})
    reference = type("ReferenceChecked", (StrictSerializer,), {**declared, "Meta": meta})
    assert _outcome(flat, QueryDict(query)) == _outcome(reference, QueryDict(query))
    assert _outcome(flat, QueryDict(query).dict()) == _outcome(reference, QueryDict(query).dict())
    if "quiet=false" in query:
        assert _outcome(flat, QueryDict(query))[0] == "invalid"


def test_a_read_only_default_reaches_the_serializers_validators():
    declared = {"user_id": serializers.CharField(), "region": serializers.CharField(read_only=True, default="us")}
    meta = type("Meta", (), {"validators": [_region_known]})
    flat = type("FlatRegion", (FlatQuerySerializer,), {**declared, "Meta": meta})
    reference = type("ReferenceRegion", (StrictSerializer,), {**declared, "Meta": meta})
    expected = ("invalid", {"non_field_errors": ["Unknown region."]})
    assert _outcome(flat, QueryDict("user_id=a")) == _outcome(reference, QueryDict("user_id=a")) == expected


class _FieldName:
    """A default that reads its field (``requires_context``): DRF calls it with the field."""

    requires_context = True

    def __call__(self, field):
        return f"named {field.field_name}"


def test_a_default_that_reads_its_field_is_given_as_drf_gives_it():
    declared = {"user_id": serializers.CharField(), "label": serializers.CharField(required=False, default=_FieldName())}
    flat = type("FlatLabel", (FlatQuerySerializer,), dict(declared))
    reference = type("ReferenceLabel", (StrictSerializer,), dict(declared))
    for data in (QueryDict("user_id=a"), {"user_id": "a"}):
        assert _outcome(flat, data) == _outcome(reference, data) == ("valid", {"user_id": "a", "label": "named label"})
