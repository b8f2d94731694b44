-- The transfer archive (issue 17). Every statement is idempotent; Open runs them under an
-- advisory lock when a table is missing.

-- A finished transfer, as the API server held it when it was archived.
CREATE TABLE IF NOT EXISTS archived_transfers (
    id            text        PRIMARY KEY,          -- the 24-character transfer id
    uid           text        NOT NULL,             -- metadata.uid of the archived object
    namespace     text        NOT NULL,             -- the account's namespace
    account       text        NOT NULL,
    method        text        NOT NULL,             -- v1 | v2
    network       text        NOT NULL,
    customer_uuid text        NOT NULL,             -- lower case, as claimed
    tx_hash       text,                             -- v2: the confirmed hash, normalised as claimed
    phase         text        NOT NULL,             -- completed | failed | refunded
    created_at    timestamptz NOT NULL,
    ended_at      timestamptz NOT NULL,             -- status.updatedAt: the retention counts from it
    archived_at   timestamptz NOT NULL DEFAULT now(),
    lookup        json        NOT NULL,             -- GET /api/payouts/transfer/{id}'s "transfer", byte for byte
    object        jsonb       NOT NULL,             -- the whole Transfer, for audit
    refund        jsonb                             -- its Refund object, if one was made
);
CREATE UNIQUE INDEX IF NOT EXISTS archived_transfers_customer_uuid ON archived_transfers (customer_uuid);
CREATE UNIQUE INDEX IF NOT EXISTS archived_transfers_tx_hash ON archived_transfers (tx_hash) WHERE tx_hash IS NOT NULL;
CREATE INDEX IF NOT EXISTS archived_transfers_account ON archived_transfers (account, created_at);

-- The chain watcher's Deposit objects of archived transfers: the ledger of funds received.
CREATE TABLE IF NOT EXISTS archived_deposits (
    namespace   text   NOT NULL,
    name        text   NOT NULL,
    transfer_id text   NOT NULL REFERENCES archived_transfers (id),
    network     text   NOT NULL,
    tx_hash     text   NOT NULL,                    -- lower case, as the facade's index has it
    log_index   bigint NOT NULL,
    object      jsonb  NOT NULL,
    PRIMARY KEY (namespace, name)
);
CREATE INDEX IF NOT EXISTS archived_deposits_tx_hash ON archived_deposits (tx_hash);
CREATE INDEX IF NOT EXISTS archived_deposits_transfer ON archived_deposits (transfer_id);

-- Deleted recipients whose transfers are all archived.
CREATE TABLE IF NOT EXISTS archived_recipients (
    id          bigint      PRIMARY KEY,
    uid         text        NOT NULL,
    namespace   text        NOT NULL,
    lineage     text        NOT NULL,
    replaced_by bigint,
    archived_at timestamptz NOT NULL DEFAULT now(),
    lookup      json        NOT NULL,               -- GET /api/payouts/recipients/{id}, byte for byte
    object      jsonb       NOT NULL
);
