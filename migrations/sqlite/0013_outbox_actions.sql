-- Buttons under an outbox message (an exec approval request's allow/deny buttons): a JSON
-- array of {label, id}, rendered by adapters whose platform has buttons. NULL: none.
ALTER TABLE outbox ADD COLUMN actions TEXT;
