-- Wide view for ad-hoc SQL: one row per item (item, input, system, is_human) and one column per
-- measure, e.g. SELECT system, avg("BLEU") FROM scores_wide GROUP BY system.
-- A PIVOT inside a view must list its values, so this file is a template: hanna_stats.store
-- replaces {measure_list} with the quoted measure names in catalogue order and (re)creates the view
-- at the end of every ingest, in the same transaction. Values are those of item_scores.
CREATE OR REPLACE VIEW scores_wide AS
SELECT * EXCLUDE (input_position, system_position)
FROM (
    PIVOT (
        SELECT item, input, input_position, system, system_position, is_human, measure, value
        FROM item_scores
    )
    ON measure IN ({measure_list})
    USING first(value)
    GROUP BY item, input, input_position, system, system_position, is_human
)
ORDER BY system_position, system, input_position, input;
