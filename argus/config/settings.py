"""Settings: built once at start-up from the environment (``ARGUS_*``) and passed down."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

import platformdirs
from psycopg import ProgrammingError
from psycopg.conninfo import conninfo_to_dict
from pydantic import Field, SecretStr, ValidationInfo, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict
from pymongo import uri_parser

from argus.agent.errors import ArgusError
from argus.agent.failing_bounds import FAILING_DEFAULT, FAILING_MAX
from argus.agent.findings import Severity
from argus.agent.llm.options import EvaluatorProfile, LLMOptions, PlannerKind, StructuredOutput
from argus.agent.options import AuditOptions, PrivacyMode
from argus.agent.secrets import SECRETS

__all__ = ["TOKEN_MIN", "Settings", "check_database_url", "check_mongodb_uri"]

TOKEN_MIN = 16  # characters of a bearer token: shorter ones are guessable

# pymongo's own messages may quote parts of the URI ('Bad database name "ss@host/db"'): each
# known one maps to a sentence of ours, and anything else to a generic one.
_MONGO_REASONS = (
    ("scheme", "the scheme must be mongodb:// or mongodb+srv://"),
    ("escaped", "a ':', '/', '@' or '%' in the user name or password must be percent-escaped "
                "(urllib.parse.quote_plus)"),
    ("database name", "the database name is invalid (an unescaped '/' or '@' in the password ends the host part "
                      "early: percent-escape it)"),
    ("port", "a port must be a number from 1 to 65535"),
    ("host", "it names no valid host"),
    ("option", "an option in its query string is unknown or has an invalid value (not shown)"),
    ("must be", "an option in its query string has an invalid value (not shown)"),
)


def check_mongodb_uri(uri: str, source: str) -> str:
    """``uri`` when it is a MongoDB connection string pymongo can use; otherwise ``ArgusError``
    naming ``source`` and what is wrong, never the string. Its secrets are registered for
    masking either way."""
    SECRETS.register_connection_string(uri)
    uri = uri.strip()
    prefix = f"{source} is not a valid MongoDB URI: "
    lowered = uri[:14].lower()
    if not (lowered.startswith("mongodb://") or lowered.startswith("mongodb+srv://")) or \
            not (uri.startswith("mongodb://") or uri.startswith("mongodb+srv://")):
        raise ArgusError(prefix + "the scheme must be mongodb:// or mongodb+srv://")
    # An SRV name is resolved by DNS; its syntax is checked here as a plain URI, without the lookup.
    plain = "mongodb://" + uri.removeprefix("mongodb+srv://") if uri.startswith("mongodb+srv://") else uri
    try:
        uri_parser.parse_uri(plain, validate=True, warn=False)
    except Exception as exc:  # InvalidURI, ConfigurationError, ValueError: never echoed
        text = str(exc).lower()
        reason = next((why for key, why in _MONGO_REASONS if key in text), "it cannot be parsed")
        raise ArgusError(prefix + reason) from None
    return uri


_PG_URL = re.compile(r"^postgres(ql)?://", re.I)


def check_database_url(dsn: str, source: str = "ARGUS_DATABASE_URL") -> str:
    """``dsn`` when psycopg can use it (a ``postgresql://`` URL or ``key=value`` pairs); otherwise
    ``ArgusError`` naming ``source``, never the DSN, before any pool or logger sees it."""
    SECRETS.register_connection_string(dsn)
    dsn = dsn.strip()
    prefix = f"{source} is not a valid PostgreSQL URL: "
    url_like = "://" in dsn or re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:/", dsn) or "=" not in dsn
    if url_like and not _PG_URL.match(dsn):
        raise ArgusError(prefix + "the scheme must be postgresql:// or postgres:// (or give key=value pairs)")
    try:
        conninfo_to_dict(dsn)
    except (ProgrammingError, ValueError):
        raise ArgusError(prefix + "it cannot be parsed (percent-escape ':', '/', '@' and '%' in the password)") \
            from None
    return dsn


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="ARGUS_", extra="ignore")

    log_level: str = Field("INFO", description="DEBUG, INFO, WARNING or ERROR")
    log_format: Literal["console", "json"] = Field("console", description="console (for people) or json (one "
                                                                          "object per line, for collectors)")

    sample_size: int = Field(1000, ge=1, le=10_000, description="documents $sample reads (argus audit --sample-size)")
    max_iterations: int = Field(200, ge=1, description="planner steps before the run ends partial")
    time_budget_s: float = Field(300.0, gt=0, description="wall-clock budget of argus audit, in seconds")
    max_time_ms: int = Field(10_000, ge=1, description="server time limit of every query")
    min_field_coverage: float = Field(0.8, ge=0, le=1, description="share of fields a query must have checked "
                                                                   "before the run gate accepts a conclusion")
    privacy: PrivacyMode = Field("shapes", description="what Argus writes about document values: strict, shapes or "
                                                       "full")
    fail_on: Severity | None = Field(Severity.HIGH, description="argus audit exits 1 when a finding is at least "
                                                                "this severe; none: never")
    failing_documents: int = Field(FAILING_DEFAULT, ge=0, le=FAILING_MAX,
                                   description="_ids of failing documents each finding keeps (argus finding show "
                                               "--documents); 0: none")

    database_url: SecretStr | None = Field(None, description="PostgreSQL DSN for run history; unset: embedded")
    data_dir: Path = Field(default_factory=lambda: Path(platformdirs.user_data_dir("argus")),
                           description="where the embedded PostgreSQL and other local state live")
    store_pool_size: int = Field(4, ge=1, description="connections to the history database (the daemon opens "
                                                      "workers + 4)")
    history_runs: int = Field(10, ge=1, description="runs the historical context is built from")
    drift_tolerance: float = Field(0.5, gt=0, description="relative spread of affected shares that counts as drifting")
    growth_factor: float = Field(1.5, gt=1, description="share growth that makes a finding regressed, or a "
                                                       "false-positive label no longer apply")
    retention_days: float = Field(90, gt=0, description="runs older than this are pruned (labels are kept)")

    planner: PlannerKind = Field("heuristic", description="heuristic, llm or hybrid (argus audit --planner)")
    # The language model (planner llm / hybrid); a schedule's `llm:` block overrides any of these.
    llm_provider: Literal["openai", "azure"] = Field("openai", description="openai: OpenAI or any compatible "
                                                                          "server by base_url; azure: Azure OpenAI")
    llm_model: str = Field("gpt-4o-mini", description="model name (Azure: the model behind the deployment)")
    llm_base_url: str | None = Field(None, description="OpenAI-compatible endpoint (vLLM, Ollama, LiteLLM)")
    llm_api_key_env: str | None = Field(None, description="variable holding the key [OPENAI_API_KEY / "
                                                          "AZURE_OPENAI_API_KEY]")
    llm_api_key_file: Path | None = Field(None, description="file holding the API key (a mounted secret)")
    llm_azure_endpoint: str | None = Field(None, description="https://NAME.openai.azure.com")
    llm_azure_deployment: str | None = Field(None, description="the Azure OpenAI deployment that serves the model")
    llm_api_version: str | None = Field(None, description="Azure OpenAI API version, e.g. 2024-10-21")
    llm_timeout_s: float | None = Field(None, gt=0, description="[60 hosted, 300 self-hosted]")
    llm_max_retries: int = Field(3, ge=0, description="retries on 429, 5xx and answers that are not JSON")
    llm_backoff_s: float = Field(1.0, ge=0, description="first retry delay; doubles each retry")
    llm_max_backoff_s: float = Field(30.0, ge=0, description="longest delay between two retries")
    llm_max_retry_after_s: float = Field(60.0, ge=0, description="a longer Retry-After gives up instead of waiting")
    llm_prompt_token_budget: int = Field(8000, ge=4000, description="estimated tokens per prompt, never exceeded")
    llm_run_token_budget: int | None = Field(1_000_000, ge=1, description="tokens per run (all purposes)")
    llm_run_cost_budget_usd: float | None = Field(1.0, gt=0, description="US dollars per run (all purposes)")
    llm_fallback_after: int = Field(3, ge=1, description="consecutive failed turns before the heuristic planner "
                                                         "takes over")
    llm_structured_output: StructuredOutput = Field("auto", description="request shape to start with: tools, "
                                                                        "json_schema, json_object or text (auto: "
                                                                        "tools)")
    llm_temperature: float | None = Field(0.0, ge=0, le=2, description="unset for reasoning models")
    llm_max_output_tokens: int = Field(1024, ge=16, description="tokens the model may answer with per call")
    llm_evaluators: EvaluatorProfile = Field("fast", description="fast: rule gates only; balanced: + the model's "
                                                                 "self-evaluation; thorough: + a judge")
    llm_judge_model: str | None = Field(None, description="the judge of the thorough profile [default: the model]")

    schedules: Path = Field(Path("schedules.yaml"), description="the daemon's schedules file")
    listen: str = Field("127.0.0.1:9464", description="HOST:PORT of the daemon's HTTP server (the image sets "
                                                      "0.0.0.0:9464)")
    workers: int = Field(4, ge=1, description="audits that may run at the same time")
    misfire_grace_s: float = Field(60, gt=0, description="a trigger later than this is skipped (and counted)")
    shutdown_grace_s: float = Field(30, ge=0, description="how long running audits may finish on SIGTERM")
    reload_poll_s: float = Field(1.0, gt=0, description="how often the schedules file is checked for edits")
    alert_poll_s: float = Field(2.0, gt=0, description="how often the alert outbox is checked for due alerts")
    alert_retry_base_s: float = Field(5.0, gt=0, description="first retry delay of an undelivered alert (doubles)")
    alert_retry_max_s: float = Field(600.0, gt=0, description="longest delay between two delivery attempts")
    # Status changes over HTTP (POST /incidents/ID/ack ...) need this bearer token; unset, the routes do not exist.
    incident_token: SecretStr | None = Field(None, description="bearer token for incident status changes over HTTP")
    incident_token_file: Path | None = Field(None, description="file holding that token (e.g. a mounted secret), "
                                                               "read at each request")

    @field_validator("database_url", "incident_token", "incident_token_file", mode="before")
    @classmethod
    def _empty_is_unset(cls, value: Any) -> Any:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("fail_on", mode="before")
    @classmethod
    def _none_never_fails(cls, value: Any) -> Any:
        """``ARGUS_FAIL_ON=none``, as ``--fail-on none``: no finding fails the exit code."""
        return None if isinstance(value, str) and value.strip().lower() == "none" else value

    @field_validator("incident_token")
    @classmethod
    def _long_enough(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None:  # a refused value is never written anywhere; a valid one is masked everywhere
            if len(value.get_secret_value().strip()) < TOKEN_MIN:
                raise ValueError(f"the token is too short: at least {TOKEN_MIN} characters (e.g. openssl rand -hex 32)")
            SECRETS.register(value.get_secret_value().strip())
        return value

    @field_validator("incident_token_file")
    @classmethod
    def _one_token(cls, value: Path | None, info: ValidationInfo) -> Path | None:
        if value is not None and info.data.get("incident_token") is not None:
            raise ValueError("give ARGUS_INCIDENT_TOKEN or ARGUS_INCIDENT_TOKEN_FILE, not both")
        return value

    def model_post_init(self, context: Any, /) -> None:
        if self.database_url is not None:
            SECRETS.register_connection_string(self.database_url.get_secret_value())

    @property
    def incidents_writable(self) -> bool:
        """A token is configured: the HTTP routes that change an incident's status exist."""
        return self.incident_token is not None or self.incident_token_file is not None

    def incident_token_value(self) -> SecretStr | None:
        """The bearer token for incident status changes, the file read now (a rotated secret is
        picked up); ``ArgusError`` names the file, never its content."""
        if self.incident_token is not None:
            return SecretStr(self.incident_token.get_secret_value().strip())
        if self.incident_token_file is None:
            return None
        try:
            value = self.incident_token_file.read_text().strip()
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) else "it is not text"
            raise ArgusError(f"cannot read the incident token from {self.incident_token_file}: {reason}") from None
        if len(value) < TOKEN_MIN:
            raise ArgusError(f"{self.incident_token_file} (ARGUS_INCIDENT_TOKEN_FILE) holds no token of at least "
                             f"{TOKEN_MIN} characters")
        SECRETS.register(value)
        return SecretStr(value)

    def database_dsn(self) -> str | None:
        """``ARGUS_DATABASE_URL`` checked (``ArgusError`` names the variable, never the value)."""
        return None if self.database_url is None else check_database_url(self.database_url.get_secret_value())

    def llm_options(self, overrides: LLMOptions | None = None, **values: Any) -> LLMOptions:
        """LLM options from ``ARGUS_LLM_*``, then a schedule's ``overrides``, then non-None ``values``.
        The API key they name is registered for masking: an endpoint may echo it back in an error."""
        base = {name.removeprefix("llm_"): getattr(self, name) for name in type(self).model_fields
                if name.startswith("llm_")}
        options = LLMOptions.model_validate(base).merged(overrides)
        given = {k: v for k, v in values.items() if v is not None}
        options = LLMOptions.model_validate({**options.model_dump(), **given}) if given else options
        try:
            key = options.api_key()
        except (ArgusError, OSError):
            key = None  # the client names the missing variable or file when it is built
        if key is not None:
            SECRETS.register(key.get_secret_value())
        return options

    def audit_options(self, **overrides: Any) -> AuditOptions:
        """Options for one audit: these settings, with non-None ``overrides`` on top."""
        values: dict[str, Any] = {
            "sample_size": self.sample_size, "max_iterations": self.max_iterations,
            "time_budget_s": self.time_budget_s, "max_time_ms": self.max_time_ms,
            "min_field_coverage": self.min_field_coverage, "privacy": self.privacy, "fail_on": self.fail_on,
            "failing_documents": self.failing_documents,
        }
        values.update({k: v for k, v in overrides.items() if v is not None})
        return AuditOptions(**values)
