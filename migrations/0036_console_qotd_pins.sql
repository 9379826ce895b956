-- The owners' console pins a quote to a coming day (issue 28): the pinned row is what /v1/qotd serves that day.
-- A pin marks the row so the calendar can show it and an unpin removes only a pin, never a day's own choice.
ALTER TABLE quote_of_day ADD COLUMN pinned boolean NOT NULL DEFAULT false;
