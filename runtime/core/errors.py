"""One error hierarchy for everything schemarag raises on purpose.

Every message names the file, field or value at fault and says how to fix it, so a user
reading a CLI error never needs a traceback. Callers catch :class:`SchemaragError`.
"""

from __future__ import annotations


class SchemaragError(Exception):
    """Base of every error schemarag raises deliberately."""


class InvalidNameError(SchemaragError, ValueError):
    """A database, tenant or datasource name that is unsafe as a path component."""


class SchemaFileError(SchemaragError):
    """A schema JSON file that is missing, unreadable or does not validate."""


class DocParseError(SchemaragError):
    """A markdown doc file that cannot be chunked (reported as a warning, then skipped)."""


class ArtifactError(SchemaragError):
    """An index artifact that is missing, incomplete, corrupted or built for another model."""


class ArtifactNotFoundError(ArtifactError):
    """No published index exists for the requested database."""


class ManifestMismatchError(ArtifactError):
    """The manifest disagrees with what the reader expects (format, model, dimension)."""


class ChecksumMismatchError(ArtifactError):
    """A file inside an artifact does not match the checksum recorded in its manifest."""


class EmbeddingModelError(SchemaragError):
    """The embedding model files cannot be found or loaded offline."""


class QuestionError(SchemaragError, ValueError):
    """A question that cannot be retrieved for (empty, whitespace only)."""


class ConfigError(SchemaragError, ValueError):
    """A configuration value (environment variable, CLI flag, file) that is invalid."""


class LLMError(SchemaragError):
    """The LLM endpoint failed, timed out or answered with something unusable."""


class SQLValidationError(SchemaragError):
    """SQL that does not parse, is not read-only, or references unknown tables/columns."""


class DatasourceError(SchemaragError):
    """A live datasource that cannot be reached, read or introspected."""


class ImportFormatError(SchemaragError):
    """A benchmark catalog (Spider/BIRD format) that cannot be imported."""


class MissingExtraError(SchemaragError, ImportError):
    """An optional dependency (an extra such as ``schemarag[build]``) is not installed."""
