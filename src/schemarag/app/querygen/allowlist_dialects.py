"""Reviewed, side-effect-free SQL functions by name, per dialect: the names sqlglot leaves untyped.

sqlglot turns most standard functions into typed expression classes (checked by class in
:mod:`.allowlist`); a function it does not know becomes ``exp.Anonymous`` carrying only its name.
Such a name is accepted only if it is listed here for the query's dialect. Each list was reviewed
against the engine's documentation (SQLite "Built-in Scalar/Aggregate/Date/Math/JSON Functions",
PostgreSQL "Functions and Operators", DuckDB "Functions", MySQL "Built-In Function Reference")
and holds only functions that compute a value from their arguments: nothing that reads or writes
files, large objects or sequences, reaches the network, sleeps, takes locks, runs a query string,
reads server settings, or changes the session. A function missing here is rejected with its name;
add it only after the same review (the tests list the functions that must stay out).
"""

from __future__ import annotations


def _names(text: str) -> frozenset[str]:
    return frozenset(w.lower() for line in text.splitlines() if not line.lstrip().startswith("#")
                     for w in line.split())  # fmt: skip


# Window and aggregate functions every supported engine computes in-memory.
_COMMON = """
    abs avg ceil ceiling coalesce count cume_dist dense_rank exp first_value floor greatest
    lag last_value lead least length ln log lower ltrim max min mod nth_value ntile nullif
    percent_rank power rank replace round row_number rtrim sign sqrt substr substring sum trim upper
"""

SQLITE = _names(
    _COMMON
    + """
    # core scalar (load_extension, randomblob, zeroblob and the sqlite_* introspection are out)
    char concat concat_ws format glob hex ifnull iif instr like likelihood likely lower ltrim
    octet_length printf quote random rtrim soundex typeof unhex unicode unlikely
    # date and time
    date datetime julianday strftime time timediff unixepoch
    # aggregate
    group_concat string_agg total
    # math
    acos acosh asin asinh atan atan2 atanh cos cosh degrees log10 log2 pi pow radians sin sinh
    tan tanh trunc
    # JSON (json_each / json_tree are pure table-valued functions)
    json json_array json_array_length json_each json_extract json_group_array json_group_object
    json_insert json_object json_patch json_quote json_remove json_replace json_set json_tree
    json_type json_valid jsonb
"""
)

POSTGRES = _names(
    _COMMON
    + """
    # math
    acos acosd acosh asin asind asinh atan atan2 atan2d atand atanh cbrt cos cosd cosh cot cotd
    degrees div erf erfc factorial gcd lcm log10 min_scale pi radians random scale sin sind sinh
    tan tand tanh trim_scale trunc width_bucket
    # string
    ascii bit_length btrim char_length character_length chr concat concat_ws decode encode format
    initcap left lpad md5 normalize octet_length overlay position quote_ident quote_literal
    quote_nullable regexp_count regexp_instr regexp_like regexp_match regexp_matches
    regexp_replace regexp_split_to_array regexp_split_to_table regexp_substr repeat reverse right
    rpad sha224 sha256 sha384 sha512 split_part starts_with string_to_array string_to_table strpos
    to_hex translate unistr
    # formatting
    to_char to_date to_number to_timestamp
    # date and time
    age clock_timestamp date_add date_bin date_part date_subtract date_trunc isfinite
    justify_days justify_hours justify_interval make_date make_interval make_time make_timestamp
    make_timestamptz now statement_timestamp timeofday transaction_timestamp
    # aggregate
    array_agg bit_and bit_or bit_xor bool_and bool_or corr covar_pop covar_samp every json_agg
    json_object_agg jsonb_agg jsonb_object_agg mode percentile_cont percentile_disc regr_avgx
    regr_avgy regr_count regr_intercept regr_r2 regr_slope regr_sxx regr_sxy regr_syy stddev
    stddev_pop stddev_samp string_agg var_pop var_samp variance grouping
    # arrays and set-returning
    array_append array_cat array_dims array_length array_lower array_ndims array_position
    array_positions array_prepend array_remove array_replace array_to_string array_upper
    cardinality generate_series generate_subscripts trim_array unnest
    # JSON
    array_to_json json_array_elements json_array_elements_text json_array_length json_build_array
    json_build_object json_each json_each_text json_extract_path json_extract_path_text
    json_object_keys json_strip_nulls json_typeof jsonb_array_elements jsonb_array_elements_text
    jsonb_array_length jsonb_build_array jsonb_build_object jsonb_each jsonb_each_text
    jsonb_extract_path jsonb_extract_path_text jsonb_insert jsonb_object_keys jsonb_pretty
    jsonb_set jsonb_strip_nulls jsonb_typeof row_to_json to_json to_jsonb
    # text search and misc
    gen_random_uuid num_nonnulls num_nulls plainto_tsquery to_tsquery to_tsvector ts_rank
    websearch_to_tsquery isempty lower_inc upper_inc
"""
)

DUCKDB = _names(
    _COMMON
    + """
    # math
    acos asin atan atan2 bit_count cbrt cos cot degrees even factorial gamma gcd isinf isnan
    lcm lgamma log10 log2 nextafter pi pow radians random sin tan trunc xor
    # string
    ascii bar chr concat concat_ws contains ends_with format hash ilike_escape instr lcase left
    len length_grapheme like_escape lpad md5 nfc_normalize ord position prefix printf regexp_extract
    regexp_extract_all regexp_full_match regexp_matches regexp_replace regexp_split_to_array repeat
    reverse right rpad sha256 split_part starts_with str_split str_split_regex string_split
    string_split_regex strip_accents strlen strpos suffix translate ucase unicode
    # date and time
    age century date_add date_diff date_part date_sub date_trunc datediff datepart datesub
    datetrunc day dayname dayofmonth dayofweek dayofyear decade epoch epoch_ms epoch_us era hour
    isodow isoyear julian last_day make_date make_time make_timestamp microsecond millennium
    millisecond minute month monthname now quarter second strftime strptime time_bucket
    to_timestamp today try_strptime week weekday weekofyear year yearweek
    # aggregate
    any_value approx_count_distinct approx_quantile arg_max arg_min argmax argmin array_agg
    bit_and bit_or bit_xor bool_and bool_or corr covar_pop covar_samp entropy favg first fsum
    group_concat histogram kahan_sum kurtosis last list max_by median min_by mode product quantile
    quantile_cont quantile_disc regr_avgx regr_avgy regr_count regr_intercept regr_r2 regr_slope
    regr_sxx regr_sxy regr_syy skewness stddev stddev_pop stddev_samp string_agg sumkahan var_pop
    var_samp variance
    # lists, structs, maps and table functions over values
    array_contains array_distinct array_length array_position array_slice array_to_string
    cardinality element_at flatten generate_series list_aggregate list_contains list_distinct
    list_element list_extract list_filter list_has list_position list_reduce list_reverse_sort
    list_slice list_sort list_transform list_value map map_extract map_keys map_values range
    struct_extract struct_pack unnest
    # JSON
    json_array json_array_length json_contains json_extract json_extract_path json_extract_string
    json_group_array json_group_object json_keys json_object json_structure json_type json_valid
    to_json
"""
)

MYSQL = _names(
    _COMMON
    + """
    # math
    acos asin atan atan2 conv cos cot crc32 degrees log10 log2 pi pow radians rand sin tan truncate
    # string
    ascii bin bit_length char char_length character_length concat concat_ws elt field find_in_set
    format from_base64 hex insert instr lcase left locate lpad make_set md5 mid oct octet_length ord
    position quote regexp_instr regexp_like regexp_replace regexp_substr repeat reverse right rpad
    sha sha1 sha2 soundex space strcmp substring_index to_base64 ucase unhex
    # date and time
    adddate addtime convert_tz curdate current_date current_time current_timestamp curtime date
    date_add date_format date_sub datediff day dayname dayofmonth dayofweek dayofyear extract
    from_days from_unixtime hour last_day localtime localtimestamp makedate maketime microsecond
    minute month monthname now period_add period_diff quarter sec_to_time second str_to_date
    subdate subtime sysdate time time_format time_to_sec timediff timestamp timestampadd
    timestampdiff to_days to_seconds unix_timestamp utc_date utc_time utc_timestamp week weekday
    weekofyear year yearweek
    # aggregate and conditional
    bit_and bit_or bit_xor group_concat if ifnull json_arrayagg json_objectagg std stddev
    stddev_pop stddev_samp var_pop var_samp variance
    # JSON
    json_array json_contains json_extract json_keys json_length json_object json_quote
    json_type json_unquote json_valid
"""
)

BY_DIALECT: dict[str, frozenset[str]] = {
    "sqlite": SQLITE, "postgres": POSTGRES, "duckdb": DUCKDB, "mysql": MYSQL,
}  # fmt: skip


def allowed_names(dialect: str) -> frozenset[str]:
    """Untyped function names allowed in ``dialect`` (only the common window/aggregate set for a
    dialect without a reviewed list: its other functions must be ones sqlglot types)."""
    return BY_DIALECT.get(dialect, _names(_COMMON))
