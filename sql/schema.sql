-- hanna_stats score store: long format, one study per file.
-- Created by hanna_stats.store.db.open_store() (every statement is idempotent), which also runs
-- it inside the migration of an older store (see the migrate_*.sql files). A change here that a
-- stored file would not have bumps hanna_stats.store.db.SCHEMA_VERSION and adds a migration step.
-- Natural keys (names) are unique; integer ids come from sequences.

CREATE SEQUENCE IF NOT EXISTS system_id_seq;
CREATE SEQUENCE IF NOT EXISTS input_id_seq;
CREATE SEQUENCE IF NOT EXISTS item_id_seq;
CREATE SEQUENCE IF NOT EXISTS rater_id_seq;
CREATE SEQUENCE IF NOT EXISTS measure_id_seq;

-- Generators (NLG systems); the human-written reference counts as a system flagged is_human.
CREATE TABLE IF NOT EXISTS systems (
    system_id INTEGER PRIMARY KEY DEFAULT nextval('system_id_seq'),
    name      VARCHAR NOT NULL UNIQUE,
    is_human  BOOLEAN NOT NULL DEFAULT FALSE,
    position  INTEGER              -- order of first appearance in the source file
);

-- Inputs (HANNA: writing prompts). text is NULL when unknown. domain and document: the input's
-- domain and document when the study gives them (WMT: documents/LP.docs, e.g. 'news' and
-- 'xinhua-zh-01.103859'), so that analyses can group inputs by them; NULL otherwise.
-- subset: the sub-study the input belongs to, when the store holds several side by side (WMT: the
-- language pair, e.g. 'en-de'); analyses can run per subset. NULL for studies without subsets.
CREATE TABLE IF NOT EXISTS inputs (
    input_id INTEGER PRIMARY KEY DEFAULT nextval('input_id_seq'),
    name     VARCHAR NOT NULL UNIQUE,
    position INTEGER,              -- order within the source (HANNA: prompt index 0..95)
    text     VARCHAR,
    domain   VARCHAR,
    document VARCHAR,
    subset   VARCHAR
);

-- Items (HANNA: stories): one output of one system for one input.
CREATE TABLE IF NOT EXISTS items (
    item_id   INTEGER PRIMARY KEY DEFAULT nextval('item_id_seq'),
    name      VARCHAR NOT NULL UNIQUE,  -- HANNA: Story ID = 96 * row_index + prompt_index
    input_id  INTEGER NOT NULL REFERENCES inputs (input_id),
    system_id INTEGER NOT NULL REFERENCES systems (system_id),
    text      VARCHAR,                  -- the generated text, when known
    reference VARCHAR,                  -- the reference (human) text, when known
    UNIQUE (input_id, system_id)
);

-- Every reference text of an item, first (standard) one first: SummEval's 11 references per
-- summary, a scoring file's reference, reference_2, ... Kept per item, like items.reference
-- (files give references per line or row, and a document's lines need not agree). position 1 is
-- always items.reference (kept for compatibility: the standard reference); an item with a
-- reference has at least that row. name: where the reference came from ('references[3]',
-- 'reference_2'), NULL when unknown. Written only by hanna_stats.store.batch.write_batch.
CREATE TABLE IF NOT EXISTS item_references (
    item_id  INTEGER NOT NULL,                  -- items.item_id
    position INTEGER NOT NULL,                  -- 1-based; 1 = items.reference
    name     VARCHAR,
    text     VARCHAR NOT NULL,
    PRIMARY KEY (item_id, position)
);

-- Human raters. kind 'person': one identified rater (HANNA: MTurk Worker ID).
-- kind 'slot': a position among an item's ratings, not an identity (HANNA LLM file:
-- 'HANNA judge slot 1..3'); slot k of two stories may be two different people.
CREATE TABLE IF NOT EXISTS raters (
    rater_id INTEGER PRIMARY KEY DEFAULT nextval('rater_id_seq'),
    name     VARCHAR NOT NULL UNIQUE,
    kind     VARCHAR NOT NULL DEFAULT 'person' CHECK (kind IN ('person', 'slot'))
);

-- Measure catalogue: human criteria, automatic metrics, LLM judges.
CREATE TABLE IF NOT EXISTS measures (
    measure_id      INTEGER PRIMARY KEY DEFAULT nextval('measure_id_seq'),
    name            VARCHAR NOT NULL UNIQUE,     -- clean name: 'BLEU', 'BERTScore F1', 'Relevance'
    kind            VARCHAR NOT NULL CHECK (kind IN ('human', 'metric', 'llm-judge')),
    family          VARCHAR CHECK (family IN ('string', 'embedding', 'model')),
    reference_based BOOLEAN,                     -- NULL for human criteria and judges
    symbol          VARCHAR,                     -- the paper's symbol, e.g. 'Ξ§' (ref-based, string)
    abbreviation    VARCHAR,                     -- the paper's short label, e.g. 'RE' for Relevance
    criterion       VARCHAR,                     -- the human criterion a judge measure targets
    variant         VARCHAR,                     -- e.g. the LLM-judge prompt variant
    judge           VARCHAR,                     -- the LLM judge of an llm-judge measure
    scale           VARCHAR CHECK (scale IN ('likert', 'integer', 'continuous')),
    scale_min       DOUBLE,                      -- the scale's bounds (NULL: unbounded)
    scale_max       DOUBLE,
    position        INTEGER,                     -- column order in the source file
    source_name     VARCHAR                      -- the column header as in the source file
);

-- Item-level values: automatic metrics, judges, and human criteria known only as averages.
-- scores and ratings carry no FOREIGN KEY clauses: DuckDB checks them row by row (about 2 s per
-- million rows), and hanna_stats.store writes these tables only by INSERT ... SELECT joined to
-- items, measures and raters, and never deletes, so every id exists. Nor a PRIMARY KEY: its
-- index would hold every value's key in memory (about 80 bytes a value; 4 GB for 50 million),
-- which DuckDB cannot let go of. (item_id, measure_id) is unique all the same: an ingest refuses
-- a file that repeats a key, and writes a stored key by UPDATE (hanna_stats.store.batch). Stores
-- written with the key keep it.
CREATE TABLE IF NOT EXISTS scores (
    item_id    INTEGER NOT NULL,                 -- items.item_id
    measure_id INTEGER NOT NULL,                 -- measures.measure_id
    value      DOUBLE                            -- NULL = missing
);

-- Rater-level values of any measure kind: a person's rating of a criterion, or one try of an
-- LLM judge (its tries are its raters). score is NULL for an answer that could not be read as a
-- number (answer holds the raw text) or that the scale policy 'missing' dropped. (item_id,
-- rater_id, measure_id) is unique, without a PRIMARY KEY, as in scores.
CREATE TABLE IF NOT EXISTS ratings (
    item_id     INTEGER NOT NULL,                -- items.item_id
    rater_id    INTEGER NOT NULL,                -- raters.rater_id
    measure_id  INTEGER NOT NULL,                -- measures.measure_id
    score       DOUBLE,
    work_time_s DOUBLE,
    assignment  VARCHAR,
    answer      VARCHAR                          -- the raw answer text, when given (LLM judges)
);

-- System-level values that the study gives (not computed from items): WMT's system-level human
-- scores (e.g. z-normalised DA, MQM) and metric scores (e.g. corpus BLEU), which are in general
-- not the mean of their segment scores. A measure may have these without item-level values.
-- Analyses use them on request (correlate --system-scores given); view system_scores keeps the
-- means over items. Written like scores (INSERT ... SELECT joined to systems and measures).
-- subset: the subset (inputs.subset) the value is given for, '' for none (a key column cannot be
-- NULL): a system has one value per measure in each language pair of a WMT store.
CREATE TABLE IF NOT EXISTS given_system_scores_by_id (
    measure_id INTEGER NOT NULL,                 -- measures.measure_id
    system_id  INTEGER NOT NULL,                 -- systems.system_id
    value      DOUBLE,                           -- NULL = missing
    subset     VARCHAR NOT NULL DEFAULT '',      -- inputs.subset, '' for none
    PRIMARY KEY (measure_id, system_id, subset)
);

-- Domain-level values that the study gives (WMT's LP.NAME.domain.score files: one value per
-- domain and system, e.g. MQM per domain), stored as given like given_system_scores_by_id (subset
-- likewise).
CREATE TABLE IF NOT EXISTS given_domain_scores_by_id (
    measure_id INTEGER NOT NULL,                 -- measures.measure_id
    system_id  INTEGER NOT NULL,                 -- systems.system_id
    domain     VARCHAR NOT NULL,                 -- inputs.domain
    value      DOUBLE,                           -- NULL = missing
    subset     VARCHAR NOT NULL DEFAULT '',      -- inputs.subset, '' for none
    PRIMARY KEY (measure_id, system_id, domain, subset)
);

-- The study the store holds: one row, written by the first ingest (HANNA, or the name given to
-- a tidy ingest). A store holds one study: an ingest whose inputs are all new to a store that
-- already has some is refused unless it asks to extend the study (ingest --extend). A WMT store
-- holds the language pairs of one test set (subsets): named after the pair ('wmt23 en-de') while it
-- holds one, after the test set ('wmt23') once it holds several.
-- item_word: the study's own word for its items (HANNA 'story', SummEval 'summary', WMT
-- 'segment'; default 'item'), written by the first ingest; the report names the item level by it
-- ("story level"), the analyses' outputs always say 'item'.
CREATE TABLE IF NOT EXISTS study (
    name      VARCHAR NOT NULL,
    item_word VARCHAR
);

-- What each ingest found outside its measures' scales and what its scale policy did, per
-- measure: values below scale_min, above scale_max, not whole on a Likert or integer scale (rater
-- level), and answers with no number. policy: 'error' (refused; never recorded), 'missing' (set
-- to NULL), 'clip' (to the bounds, rounded to whole numbers on whole-number scales), 'keep'.
-- Human ratings are always 'error'.
CREATE TABLE IF NOT EXISTS scale_checks (
    sha256      VARCHAR NOT NULL,                -- ingests.sha256
    format      VARCHAR NOT NULL,                -- ingests.format
    measure_id  INTEGER NOT NULL,                -- measures.measure_id
    policy      VARCHAR NOT NULL,
    n_values    BIGINT NOT NULL,                 -- values of the measure in the file
    n_below     BIGINT NOT NULL,
    n_above     BIGINT NOT NULL,
    n_not_whole BIGINT NOT NULL,
    n_unparsed  BIGINT NOT NULL,
    PRIMARY KEY (sha256, format, measure_id)
);

-- Provenance: one row per ingested file (the same file ingested twice keeps one row).
CREATE TABLE IF NOT EXISTS ingests (
    source   VARCHAR NOT NULL,                   -- file name
    sha256   VARCHAR NOT NULL,
    format   VARCHAR NOT NULL,                   -- 'hanna-metric-scores', 'hanna-llm', 'hanna-annotations', 'tidy'
    n_values BIGINT NOT NULL,                    -- scores + ratings + system-level scores
    ingested_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
    PRIMARY KEY (sha256, format)
);

-- The store's schema: one row, written when the store is created or migrated. schema_version is
-- hanna_stats.store.db.SCHEMA_VERSION of the package that wrote it (an older store, without this
-- table, is schema 0); written_by: that package's version.
CREATE TABLE IF NOT EXISTS store_schema (
    schema_version INTEGER NOT NULL,
    written_by     VARCHAR NOT NULL
);
