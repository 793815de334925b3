"""What a SQL statement may contain, as allow-lists: node types of a plain query and safe functions.

A deny-list of dangerous functions leaks (PostgreSQL alone has ``lo_put``, ``query_to_xml``,
``dblink_*``, ``pg_sleep_for``, ``pg_file_write`` ... and extensions add more every release), so
validation works the other way round: every node of the parsed tree must be of a type listed
here, and every function must be either a typed sqlglot function class listed here or, for the
names sqlglot leaves untyped (``exp.Anonymous``), on the reviewed per-dialect list in
:mod:`.allowlist_dialects`. Anything else, including a function new in a later sqlglot or a
schema-qualified call such as ``public.f(x)`` (which could be any user-defined function), is
rejected with its name. New sqlglot classes therefore stay rejected until someone reviews them.
Assignments are rejected although their node types are allowed elsewhere: ``:=`` is a named
argument only directly inside a function call (``struct_pack(a := 1)``); anywhere else it
assigns a MySQL user variable (``SELECT @a := 1``). In T-SQL ``SELECT @a = x`` assigns too.
An optimizer hint reaches this check only when :mod:`.comment_policy` allowed it, so its
(engine-specific) arguments are not walked.

Example:
    >>> import sqlglot
    >>> disallowed(sqlglot.parse_one("SELECT pg_sleep_for('1 s')", read="postgres"), "postgres")
    ['not allowed: function pg_sleep_for() is not on the postgres allow-list of side-effect-free functions']
"""

from __future__ import annotations

from typing import Any

from schemarag.app.querygen.allowlist_dialects import allowed_names


def _names(text: str) -> frozenset[str]:
    return frozenset(w for line in text.splitlines() if not line.lstrip().startswith("#")
                     for w in line.split())  # fmt: skip


# sqlglot function classes (by class name) that compute a value from their arguments. Reviewed
# from sqlglot 30's expressions/{aggregate,array,core,functions,json,math,string,temporal}.py;
# left out: file readers (ReadCSV, ReadParquet, ToFile), sequences (NextValueFor), model calls
# (AI*, ML*, Generate*, Predict, VectorSearch), encryption and secrets, row generators, XML
# helpers, dynamic identifiers, account/session introspection beyond user/database/schema.
SAFE_FUNCTION_CLASSES = _names("""
    # aggregate
    Agg AnyValue ApproxPercentileAccumulate ApproxPercentileCombine ApproxPercentileEstimate
    ApproxQuantile ApproxQuantiles ApproxTopK ApproxTopKAccumulate ApproxTopKCombine ApproxTopKEstimate
    ApproxTopSum ApproximateSimilarity ArgMax ArgMin ArrayAgg ArrayConcatAgg ArrayUnionAgg
    ArrayUniqueAgg Avg Corr Count CountIf CovarPop CovarSamp CumeDist DenseRank First FirstValue
    GroupConcat Grouping GroupingId Kurtosis Lag Last LastValue Lead LogicalAnd LogicalOr Max Median Min
    Minhash MinhashCombine Mode NthValue Ntile ObjectAgg PercentRank PercentileCont PercentileDisc
    Quantile Rank RegrAvgx RegrAvgy RegrCount RegrIntercept RegrR2 RegrSlope RegrSxx RegrSxy RegrSyy
    RegrValx RegrValy RowNumber Skewness Stddev StddevPop StddevSamp Sum Variance VariancePop
    # array
    Apply Array ArrayAll ArrayAny ArrayAppend ArrayCompact ArrayConcat ArrayConstructCompact
    ArrayContainedBy ArrayContains ArrayContainsAll ArrayDistinct ArrayExcept ArrayFilter ArrayFirst
    ArrayInsert ArrayIntersect ArrayLast ArrayMax ArrayMin ArrayOverlaps ArrayPosition ArrayPrepend
    ArrayRemove ArrayRemoveAt ArrayReverse ArraySize ArraySlice ArraySort ArraySum ArrayToString
    ArraysZip Explode ExplodingGenerateSeries Flatten GenerateSeries Inline List Map MapCat
    MapContainsKey MapDelete MapFromEntries MapInsert MapKeys MapPick MapSize Posexplode PosexplodeOuter
    Reduce Shuffle SplitToTable StDistance StPoint Stack StarMap StringToArray StrtokSplitToTable
    StrtokToArray Struct StructExtract ToArray ToMap Transform Unnest VarMap
    # core
    And ApproxDistinct HashAgg Hll Or Pow RegexpLike Typeof Xor
    # functions
    Case Cast CastToStrType Coalesce Collate Collation Columns ConnectByRoot Convert CurrentCatalog
    CurrentDatabase CurrentSchema CurrentSchemas CurrentUser CurrentUserId DecodeCase EqualNull Exists
    Float64 GetIgnoreCase Greatest If Int64 IsArray IsNullValue JSONCast LaxBool LaxFloat64 LaxInt64
    LaxString Least Normal Nullif Nvl2 ObjectTransform Rand Randn Randstr RangeBucket RangeN SessionUser
    ToBoolean ToVariant Try TryCast Uniform Uuid WeekStart WidthBucket Zipf
    # json
    CheckJson FromJson JSONArray JSONArrayAgg JSONArrayAppend JSONArrayContains JSONArrayInsert
    JSONBContains JSONBContainsAllTopKeys JSONBContainsAnyTopKeys JSONBContainsTopKey JSONBDeleteAtPath
    JSONBExists JSONBExtract JSONBExtractScalar JSONBObjectAgg JSONBPathExists JSONBool JSONExists
    JSONExtract JSONExtractArray JSONExtractScalar JSONFormat JSONKeys JSONKeysAtDepth JSONObject
    JSONObjectAgg JSONRemove JSONSet JSONStripNulls JSONTable JSONType ObjectId ObjectInsert OpenJSON
    ParseJSON StripNullValue
    # math
    Abs Acos Acosh Asin Asinh Atan Atan2 Atanh BitmapBitPosition BitmapBucketNumber BitmapConstructAgg
    BitmapCount BitmapOrAgg BitwiseAndAgg BitwiseCount BitwiseOrAgg BitwiseXorAgg Booland Boolnot Boolor
    BoolxorAgg Cbrt Ceil Cos Cosh CosineDistance Cot Coth Csc Csch Degrees DotProduct EuclideanDistance
    Exp Factorial Floor Getbit IsInf IsNan JarowinklerSimilarity Ln Log ManhattanDistance Nanvl Negative
    Pi Radians Rint Round SafeAdd SafeDivide SafeMultiply SafeNegate SafeSubtract Sec Sech Sign Sin Sinh
    Sqrt Tan Tanh Trunc
    # query
    JSONValueArray
    # string
    Ascii Base64DecodeBinary Base64DecodeString Base64Encode BitLength ByteLength Chr CityHash64
    CodePointsToBytes CodePointsToString Compress Concat ConcatWs Contains ConvertToCharset Decode
    DecompressBinary DecompressString Elt Encode EndsWith FarmFingerprint Format FromBase FromBase32
    FromBase64 Hex HexDecodeString Initcap IsAscii Left Length Levenshtein Lower LowerHex MD5 MD5Digest
    MD5NumberLower64 MD5NumberUpper64 MatchAgainst Normalize NumberToStr Overlay Pad ParseBignumeric
    ParseNumeric ParseUrl RegexpCount RegexpExtract RegexpExtractAll RegexpFullMatch RegexpILike
    RegexpInstr RegexpReplace RegexpSplit RegexpSubstr Repeat Replace Reverse Right RtrimmedLength SHA
    SHA1Digest SHA2 SHA2Digest SafeConvertBytesToString Search SearchIp Soundex SoundexP123 Space Split
    SplitPart StandardHash StartsWith StrPosition StrToMap String Strtok Stuff Substring SubstringIndex
    ToBase32 ToBase64 ToBinary ToChar ToCodePoints ToDecfloat ToDouble ToNumber Translate Trim
    TryBase64DecodeBinary TryBase64DecodeString TryHexDecodeBinary TryHexDecodeString TryToDecfloat
    Unhex Unicode Upper WeightString
    # temporal
    AddMonths ConvertTimezone CurrentDate CurrentDatetime CurrentTime CurrentTimestamp
    CurrentTimestampLTZ CurrentTimezone Date DateAdd DateBin DateDiff DateFromParts DateFromUnixDate
    DateStrToDate DateSub DateToDateStr DateToDi DateTrunc Datetime DatetimeAdd DatetimeDiff DatetimeSub
    DatetimeTrunc Day DayOfMonth DayOfWeek DayOfWeekIso DayOfYear Dayname DiToDate Extract
    FromISO8601Date FromISO8601Timestamp FromISO8601TimestampNanos GenerateDateArray
    GenerateTimestampArray GetExtract Hour JustifyDays JustifyHours JustifyInterval LastDay Localtime
    Localtimestamp MakeInterval Minute Month Monthname MonthsBetween NextDay ParseDatetime ParseTime
    PreviousDay Quarter Second StrToDate StrToTime StrToUnix Systimestamp Time TimeAdd TimeDiff
    TimeFromParts TimeSlice TimeStrToDate TimeStrToTime TimeStrToUnix TimeSub TimeToStr TimeToTimeStr
    TimeToUnix TimeTrunc Timestamp TimestampAdd TimestampDiff TimestampFromParts TimestampLtzFromParts
    TimestampSub TimestampTrunc TimestampTzFromParts ToDays TsOrDiToDi TsOrDsAdd TsOrDsDiff TsOrDsToDate
    TsOrDsToDateStr TsOrDsToDatetime TsOrDsToTime TsOrDsToTimestamp UnixDate UnixMicros UnixMillis
    UnixSeconds UnixToStr UnixToTime UnixToTimeStr UtcDate UtcTime UtcTimestamp Week WeekOfYear Year
    YearOfWeek YearOfWeekIso
""")

# Node types (by class name) that make up a read-only query: clauses, operators, literals, types.
# Statements (INSERT, COPY, ATTACH, PRAGMA, SET ...), SELECT ... INTO, locking clauses, custom
# OPERATOR(...) calls, session parameters and procedural blocks are absent, hence rejected.
SAFE_NODE_CLASSES = _names("""
    # query structure
    Select Union Intersect Except Subquery CTE With From Join Where Group Having Order Ordered Limit
    Offset Fetch Qualify Window WindowSpec Table TableAlias Tuple Values Lateral Lambda Cube Rollup
    GroupingSets Pivot PivotAlias PivotAny UnpivotColumns Distinct Sort Cluster Distribute PreWhere
    TableSample Prior Connect MatchRecognize MatchRecognizeMeasure ReplaceColumns WithFill Variadic
    LimitOptions TableFromRows Final HistoricalData Version OnCondition RecursiveWithSearch Filter
    WithinGroup IgnoreNulls RespectNulls HavingMax Hint JoinHint IndexTableHint WithTableHint
    ScopeResolution Semicolon
    # JSON paths and JSON_TABLE columns
    JSON JSONPath JSONPathFilter JSONPathKey JSONPathRecursive JSONPathRoot JSONPathScript
    JSONPathSelector JSONPathSlice JSONPathSubscript JSONPathUnion JSONPathWildcard JSONKeyValue
    JSONExtractQuote FormatJson JSONColumnDef JSONSchema JSONValue SkipJSONColumn OpenJSONColumnDef
    # expressions and operators
    Add Adjacent Alias Aliases All Any AtIndex AtTimeZone Between BitwiseAnd BitwiseLeftShift
    BitwiseNot BitwiseOr BitwiseRightShift BitwiseXor Boolean Bracket Column DPipe Distance
    DistanceNd Div Dot EQ Escape ExtendsLeft ExtendsRight FormatPhrase FromTimeZone GT GTE Glob
    ILike Identifier In IntDiv IntervalOp Is Kwarg LT LTE Like Literal Match Mod Mul NEQ Neg
    NestedJSONSelect Not Null NullSafeEQ NullSafeNEQ Overlaps Paren Per Placeholder Parameter
    PropertyEQ Pseudocolumn SimilarTo Slice Star Sub SubqueryPredicate TimeUnit Var Exists
    # literals and types
    HexString BitString ByteString RawString National UnicodeString Introducer
    DataType DataTypeParam Interval IntervalSpan ObjectIdentifier PseudoType
""")

# Friendlier words for the statement-like nodes a model most often writes inside a query.
_WHAT = {"Into": "SELECT ... INTO", "Lock": "FOR UPDATE/SHARE locking"}
_WRITE_MODULES = ("sqlglot.expressions.dml", "sqlglot.expressions.ddl")


def disallowed(tree: Any, dialect: str) -> list[str]:
    """Every reason ``tree`` is not a plain, side-effect-free query in ``dialect`` (deduplicated).

    ``tree`` must already be known to be an ``exp.Query`` (the caller checks the root)."""
    from sqlglot import exp

    names = allowed_names(dialect)
    errors: list[str] = []
    for node in tree.walk(prune=lambda n: isinstance(n, exp.Hint)):
        cls = type(node).__name__
        if isinstance(node, exp.Select) and not node.expressions:
            errors.append("incomplete query: a SELECT without a column list")
        elif _is_assignment(node, dialect):
            errors.append(
                f"not allowed: assignment {node.sql()[:80]}; it assigns a variable (a MySQL/MariaDB "
                "user variable, a T-SQL local) instead of only reading data; compute the value in the "
                "query (ROW_NUMBER() OVER (...) for a running number)"
            )
        elif isinstance(node, exp.Func):
            problem = _function_problem(node, cls, names, dialect)
            if problem:
                errors.append(problem)
        elif isinstance(node, exp.Dot) and isinstance(node.expression, exp.Func):
            errors.append(
                f"not allowed: schema-qualified function call {node.sql(dialect=dialect)[:80]}; "
                "call built-in functions without a schema"
            )
        elif cls not in SAFE_NODE_CLASSES:
            errors.append(_node_problem(node, cls))
    return list(dict.fromkeys(errors))


def _is_assignment(node: Any, dialect: str) -> bool:
    """``x := v`` outside a function's argument list, or T-SQL's ``SELECT @v = x``."""
    from sqlglot import exp

    if isinstance(node, exp.PropertyEQ):
        return not isinstance(node.parent, exp.Func)
    return (
        dialect == "tsql"
        and isinstance(node, exp.EQ)
        and isinstance(node.this, exp.Parameter)
        and isinstance(node.parent, exp.Select)
        and node.arg_key == "expressions"
    )


def _function_problem(node: Any, cls: str, names: frozenset[str], dialect: str) -> str | None:
    from sqlglot import exp

    if type(node) in (exp.Anonymous, exp.AnonymousAggFunc):
        name = node.name.lower()
        if name in names:
            return None
    elif cls in SAFE_FUNCTION_CLASSES:
        return None
    else:
        name = node.name if isinstance(node, exp.AnonymousAggFunc) else _spelling(node, dialect)
    allow_list = f"the {dialect} allow-list of side-effect-free functions"
    return f"not allowed: function {name.lower()}() is not on {allow_list}"


def _spelling(node: Any, dialect: str) -> str:
    """The function's name as the dialect spells it (``sqlite_version``, not ``CURRENT_VERSION``)."""
    try:
        head = node.sql(dialect=dialect).split("(", 1)[0].strip()
    except Exception:  # only a name for an error message: never fail on it
        head = ""
    return head if head.replace("_", "").replace(".", "").isalnum() else node.sql_name()


def _node_problem(node: Any, cls: str) -> str:
    if cls in _WHAT or type(node).__module__ in _WRITE_MODULES:
        what = _WHAT.get(cls, node.key.upper())
        return f"not read-only: the query contains {what}; only plain SELECT queries are allowed"
    return f"not allowed: {node.key.upper()} ({cls}) is not part of a plain SELECT query"
