-- Memory blocks: what an agent keeps between threads (save_memory/read_memory),
-- folded into each new thread's system prompt by the MemoryManager.

-- +goose Up
CREATE TABLE memory_blocks (
    agent_name text NOT NULL,
    label      text NOT NULL,
    content    text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),

    PRIMARY KEY (agent_name, label),
    CONSTRAINT memory_blocks_label_check CHECK (label ~ '^[a-z0-9][a-z0-9_.-]{0,63}$'),
    CONSTRAINT memory_blocks_content_size CHECK (octet_length(content) <= 65536)
);

-- +goose Down
DROP TABLE memory_blocks;
