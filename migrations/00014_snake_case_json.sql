-- An llm_call stitch stored the model's tool calls and the messages it was
-- sent with Go's field names as keys (llm_response.tool_calls[].ID, Name,
-- Arguments; llm_request.messages[].Role, Content, ToolCalls, ToolCallID),
-- the only stored JSON that was not snake_case. weft now writes id, name,
-- arguments, role, content, tool_calls and tool_call_id; this rewrites the
-- rows written before, so the REST API, the ops views and SQL see one shape.
-- (Go's decoder would read the old tool-call keys, being case-insensitive,
-- but the API hands llm_response to clients as stored.) Only rows with an
-- old key are touched. Down writes the old keys back.

-- +goose Up
-- +goose StatementBegin
CREATE FUNCTION weft_rename_keys(obj jsonb, renames jsonb) RETURNS jsonb
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN jsonb_typeof(obj) = 'object' THEN
        coalesce((SELECT jsonb_object_agg(coalesce(renames ->> e.key, e.key), e.value) FROM jsonb_each(obj) e), '{}'::jsonb)
    ELSE obj END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION weft_rename_each(arr jsonb, renames jsonb) RETURNS jsonb
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN jsonb_typeof(arr) = 'array' THEN
        coalesce((SELECT jsonb_agg(weft_rename_keys(e, renames) ORDER BY i)
                  FROM jsonb_array_elements(arr) WITH ORDINALITY AS t(e, i)), '[]'::jsonb)
    ELSE arr END
$$;
-- +goose StatementEnd

UPDATE stitches
SET llm_response = jsonb_set(llm_response, '{tool_calls}',
        weft_rename_each(llm_response -> 'tool_calls', '{"ID": "id", "Name": "name", "Arguments": "arguments"}'))
WHERE stitch_type = 'llm_call' AND jsonb_path_exists(llm_response, '$.tool_calls[*].ID');

UPDATE stitches
SET llm_request = jsonb_set(llm_request, '{messages}', (
        SELECT coalesce(jsonb_agg(
                   CASE WHEN jsonb_typeof(m -> 'tool_calls') = 'array'
                        THEN jsonb_set(m, '{tool_calls}', weft_rename_each(m -> 'tool_calls',
                                 '{"ID": "id", "Name": "name", "Arguments": "arguments"}'))
                        ELSE m END ORDER BY i), '[]'::jsonb)
        FROM jsonb_array_elements(weft_rename_each(llm_request -> 'messages',
                 '{"Role": "role", "Content": "content", "ToolCalls": "tool_calls", "ToolCallID": "tool_call_id"}'))
             WITH ORDINALITY AS t(m, i)))
WHERE stitch_type = 'llm_call' AND jsonb_path_exists(llm_request, '$.messages[*].Role');

DROP FUNCTION weft_rename_each(jsonb, jsonb);
DROP FUNCTION weft_rename_keys(jsonb, jsonb);

-- +goose Down
-- +goose StatementBegin
CREATE FUNCTION weft_rename_keys(obj jsonb, renames jsonb) RETURNS jsonb
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN jsonb_typeof(obj) = 'object' THEN
        coalesce((SELECT jsonb_object_agg(coalesce(renames ->> e.key, e.key), e.value) FROM jsonb_each(obj) e), '{}'::jsonb)
    ELSE obj END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION weft_rename_each(arr jsonb, renames jsonb) RETURNS jsonb
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN jsonb_typeof(arr) = 'array' THEN
        coalesce((SELECT jsonb_agg(weft_rename_keys(e, renames) ORDER BY i)
                  FROM jsonb_array_elements(arr) WITH ORDINALITY AS t(e, i)), '[]'::jsonb)
    ELSE arr END
$$;
-- +goose StatementEnd

UPDATE stitches
SET llm_response = jsonb_set(llm_response, '{tool_calls}',
        weft_rename_each(llm_response -> 'tool_calls', '{"id": "ID", "name": "Name", "arguments": "Arguments"}'))
WHERE stitch_type = 'llm_call' AND jsonb_path_exists(llm_response, '$.tool_calls[*].id');

UPDATE stitches
SET llm_request = jsonb_set(llm_request, '{messages}', (
        SELECT coalesce(jsonb_agg(
                   CASE WHEN jsonb_typeof(m -> 'ToolCalls') = 'array'
                        THEN jsonb_set(m, '{ToolCalls}', weft_rename_each(m -> 'ToolCalls',
                                 '{"id": "ID", "name": "Name", "arguments": "Arguments"}'))
                        ELSE m END ORDER BY i), '[]'::jsonb)
        FROM jsonb_array_elements(weft_rename_each(llm_request -> 'messages',
                 '{"role": "Role", "content": "Content", "tool_calls": "ToolCalls", "tool_call_id": "ToolCallID"}'))
             WITH ORDINALITY AS t(m, i)))
WHERE stitch_type = 'llm_call' AND jsonb_path_exists(llm_request, '$.messages[*].role');

DROP FUNCTION weft_rename_each(jsonb, jsonb);
DROP FUNCTION weft_rename_keys(jsonb, jsonb);
