-- Feedback on weft's answers: a click on Slack's feedback buttons is a
-- stitch of its own type, 'feedback', in the thread of the answer it
-- rates (source_platform and external_id, unique together, keep a
-- redelivered click from becoming a second stitch). The model never
-- sees it; the console and the API show it.
--
-- The list is written out as an array literal, as migration 00023 keeps
-- it (cheaper to re-plan on every insert than an IN list).

-- +goose Up
ALTER TABLE stitches DROP CONSTRAINT stitches_stitch_type_check,
    ADD CONSTRAINT stitches_stitch_type_check CHECK (stitch_type = ANY ('{system_prompt,initial_prompt,llm_call,tool_call,thread_result,discord_message,linear_activity,agent_thought,clarification_request,error,slack_message,github_message,approval_request,approval_decision,feedback}'::text[]));

-- +goose Down
-- Going down keeps each click in its place in the chain, as a note the
-- model does not see either.
UPDATE stitches SET stitch_type = 'agent_thought', content = 'Feedback: ' || coalesce(content, '')
WHERE stitch_type = 'feedback';
ALTER TABLE stitches DROP CONSTRAINT stitches_stitch_type_check,
    ADD CONSTRAINT stitches_stitch_type_check CHECK (stitch_type = ANY ('{system_prompt,initial_prompt,llm_call,tool_call,thread_result,discord_message,linear_activity,agent_thought,clarification_request,error,slack_message,github_message,approval_request,approval_decision}'::text[]));
