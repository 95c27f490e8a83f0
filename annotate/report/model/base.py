"""The base of the report's models (pydantic): their JSON form (`to_json()`), with the fields a
report leaves out and the key order the JSON has always had, and its JSON Schema.

The builders have computed and checked every value, so they make models with
`model_construct` (no validation: a report holds thousands of rows). `to_json()` writes each
value as it was built (a whole number stays an integer; numpy numbers become Python numbers;
NaN and infinities become null); `model_validate_json` reads a report's JSON back.
"""

from __future__ import annotations

import ast
import inspect
import itertools
import textwrap
from typing import Annotated, Any, ClassVar

import numpy as np
from pydantic import BaseModel, ConfigDict, SerializerFunctionWrapHandler, WithJsonSchema
from pydantic import model_serializer as _model_serializer
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import CoreSchema

Number = Annotated[int | float, WithJsonSchema({"type": "number"})]
"""A JSON number kept as built: `3` stays `3` and `3.0` stays `3.0` (a plain `float` field
would write every whole number as `3.0`, and read `3` back as one)."""


def _unknown(value: Any) -> Any:
    """What the JSON writes for a type pydantic does not know: numpy scalars as Python
    numbers, anything else as its text (as `json.dumps(default=str)` always did)."""
    return value.item() if isinstance(value, np.generic) else str(value)


class ReportModel(BaseModel):
    """Base of the report's models: `to_json()`, the schema's `required` keys. A model that
    leaves keys out of its JSON (any rule below) derives from `SparseModel`."""

    # Field docstrings become the schema's descriptions in `described` (pydantic's
    # use_attribute_docstrings would parse every class's source at import, on every report).
    model_config = ConfigDict(ser_json_inf_nan="null")

    omit_if_none: ClassVar[tuple[str, ...]] = ()
    """Fields left out of the JSON when None."""
    omit_sometimes: ClassVar[tuple[str, ...]] = ()
    """Fields `omitted()` leaves out by another rule (the schema does not require them)."""
    extras: ClassVar[str | None] = None
    """A dict field whose entries are written as keys after the fields' (None values left
    out), instead of the field itself."""

    def omitted(self) -> set[str]:
        """The fields this object leaves out of its JSON."""
        return {n for n in self.omit_if_none if getattr(self, n) is None}

    def key_order(self) -> list[str] | None:
        """The JSON's key order where it is not the fields' order (kept as it always was)."""
        return None

    def to_json(self) -> dict[str, Any]:
        """Plain JSON types only, the report's public form (`json.dumps` writes it)."""
        return self.model_dump(mode="json", warnings=False, fallback=_unknown)

    @classmethod
    def __get_pydantic_json_schema__(cls, core_schema: CoreSchema, handler: Any) -> JsonSchemaValue:
        schema = handler(core_schema)
        if handler.mode == "serialization":  # what a reader may rely on: every key written
            target = handler.resolve_ref_schema(schema)
            may_omit = {*cls.omit_if_none, *cls.omit_sometimes}
            target["required"] = [n for n in target.get("properties", {}) if n not in may_omit]
        return schema

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        rules = (
            cls.omit_if_none
            or cls.omit_sometimes
            or cls.extras
            or cls.omitted is not ReportModel.omitted
            or cls.key_order is not ReportModel.key_order
        )
        if rules and not issubclass(cls, SparseModel):
            raise TypeError(f"{cls.__name__} leaves keys out of its JSON: derive from SparseModel")


class SparseModel(ReportModel):
    """A report model whose JSON leaves keys out (`omit_if_none`, `omitted()`), orders them
    its own way (`key_order()`) or adds keys (`extras`): one serializer does all three. The
    other models are serialized by pydantic alone (thousands of rows, no Python call each)."""

    @_model_serializer(mode="wrap")
    def _json_form(self, handler: SerializerFunctionWrapHandler):
        # No return annotation: the schema in serialization mode stays the fields' own.
        data = handler(self)
        for name in self.omitted():
            data.pop(name, None)
        order = self.key_order()
        if order is not None:
            data = {n: data[n] for n in order if n in data}
        if self.extras is not None:
            extra = data.pop(self.extras, None) or {}
            data.update((k, v) for k, v in extra.items() if v is not None)
        return data


def field_docs(cls: type) -> dict[str, str]:
    """The docstrings under a class's fields (`name: type` then a string), by field name."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    body = tree.body[0].body  # type: ignore[attr-defined]
    docs = {}
    for field, after in itertools.pairwise(body):
        if (
            isinstance(field, ast.AnnAssign)
            and isinstance(field.target, ast.Name)
            and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
        ):
            docs[field.target.id] = inspect.cleandoc(after.value.value)
    return docs


def described(schema: dict[str, Any], models: list[type[BaseModel]]) -> dict[str, Any]:
    """`schema` with each model's field docstrings as its properties' descriptions."""
    definitions = schema.get("definitions", {})
    for model in models:
        properties = definitions.get(model.__name__, {}).get("properties", {})
        for name, doc in field_docs(model).items():
            if name in properties:
                properties[name] = {"description": doc, **properties[name]}
    return schema


SCHEMA_DIALECT = "http://json-schema.org/draft-07/schema#"


class Draft7(GenerateJsonSchema):
    """JSON Schema draft 7 (what most validators read, `jsonschema` 3 included): definitions
    under `definitions`, no per-property titles (the key is the title)."""

    schema_dialect = SCHEMA_DIALECT

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False

    def generate(self, schema: CoreSchema, mode: Any = "validation") -> JsonSchemaValue:
        out = super().generate(schema, mode=mode)
        if "$defs" in out:
            out["definitions"] = out.pop("$defs")
        return out


REF_TEMPLATE = "#/definitions/{model}"
