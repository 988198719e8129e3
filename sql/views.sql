-- Views over the long-format store. Loaded by hanna_stats.store.db.open_store().

-- Catalogue with readable attributes.
CREATE OR REPLACE VIEW measure_catalogue AS
SELECT name AS measure, kind, family, reference_based, symbol, abbreviation,
       criterion, variant, judge, scale, scale_min, scale_max, position, source_name
FROM measures
ORDER BY position, name;

-- Rater-level ratings with names. subset: the input's subset (inputs.subset; NULL for none).
CREATE OR REPLACE VIEW rating_records AS
SELECT it.name AS item, inp.name AS input, s.name AS system, s.is_human,
       r.name AS rater, r.kind AS rater_kind, m.name AS measure, m.kind, ra.score, ra.answer,
       ra.work_time_s, ra.assignment, inp.subset
FROM ratings ra
JOIN items it USING (item_id)
JOIN inputs inp ON inp.input_id = it.input_id
JOIN systems s ON s.system_id = it.system_id
JOIN raters r USING (rater_id)
JOIN measures m USING (measure_id);

-- One value per item and measure. A measure with rater-level values (human raters, an LLM
-- judge's tries) is the mean over raters where they exist, otherwise the stored (already
-- averaged) value; ratings with no score (unparsed answers) do not count. When an item has ratings from
-- identified raters (kind 'person') and from judge slots (kind 'slot', the same ratings known only
-- by position), only the former count, so no rating is counted twice. subset: the input's subset
-- (inputs.subset: WMT's language pair; NULL for studies without subsets).
CREATE OR REPLACE VIEW item_scores AS
WITH rated AS (
    SELECT ra.item_id, ra.measure_id,
           coalesce(avg(ra.score) FILTER (WHERE r.kind = 'person'), avg(ra.score)) AS value,
           coalesce(nullif(count(ra.score) FILTER (WHERE r.kind = 'person'), 0), count(ra.score))
               AS n_ratings
    FROM ratings ra JOIN raters r USING (rater_id)
    GROUP BY ra.item_id, ra.measure_id
),
combined AS (
    SELECT coalesce(r.item_id, s.item_id) AS item_id,
           coalesce(r.measure_id, s.measure_id) AS measure_id,
           CASE WHEN r.item_id IS NOT NULL THEN r.value ELSE s.value END AS value,
           coalesce(r.n_ratings, 0) AS n_ratings
    FROM rated r FULL OUTER JOIN scores s
      ON r.item_id = s.item_id AND r.measure_id = s.measure_id
)
SELECT it.name AS item, inp.name AS input, inp.position AS input_position,
       sy.name AS system, sy.position AS system_position, sy.is_human,
       m.name AS measure, m.kind, m.position AS measure_position, c.value, c.n_ratings,
       c.item_id, c.measure_id, it.input_id, it.system_id,  -- integer keys, for fast joins
       inp.subset
FROM combined c
JOIN items it ON it.item_id = c.item_id
JOIN inputs inp ON inp.input_id = it.input_id
JOIN systems sy ON sy.system_id = it.system_id
JOIN measures m ON m.measure_id = c.measure_id;

-- HANNA's name for item_scores (its items are stories), kept as an alias.
CREATE OR REPLACE VIEW story_scores AS SELECT * FROM item_scores;

-- System-level means over items (missing values ignored; n_items counts the values used), per
-- subset (one row per system and measure in each language pair of a WMT store).
CREATE OR REPLACE VIEW system_scores AS
SELECT system, any_value(system_position) AS system_position, any_value(is_human) AS is_human,
       measure, any_value(kind) AS kind, any_value(measure_position) AS measure_position,
       avg(value) AS value, stddev_samp(value) AS std, count(value) AS n_items, subset
FROM item_scores
GROUP BY subset, system, measure;

-- System-level values given by the study (table given_system_scores_by_id: WMT's .sys.score
-- files), with names. Not the means over items, which are system_scores. subset: the subset the value
-- is given for (WMT: the language pair), NULL for none.
CREATE OR REPLACE VIEW given_system_scores AS
SELECT sy.name AS system, sy.position AS system_position, sy.is_human,
       m.name AS measure, m.kind, m.position AS measure_position, g.value,
       nullif(g.subset, '') AS subset
FROM given_system_scores_by_id g
JOIN systems sy USING (system_id)
JOIN measures m USING (measure_id)
ORDER BY measure_position NULLS LAST, measure, system_position NULLS LAST, system, g.subset;

-- Domain-level values given by the study (table given_domain_scores_by_id: WMT's .domain.score
-- files), with names; subset as in given_system_scores.
CREATE OR REPLACE VIEW given_domain_scores AS
SELECT d.domain, sy.name AS system, sy.position AS system_position, sy.is_human,
       m.name AS measure, m.kind, m.position AS measure_position, d.value,
       nullif(d.subset, '') AS subset
FROM given_domain_scores_by_id d
JOIN systems sy USING (system_id)
JOIN measures m USING (measure_id)
ORDER BY measure_position NULLS LAST, measure, domain, system_position NULLS LAST, system,
         d.subset;
