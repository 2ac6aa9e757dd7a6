"""Webhooks: an app's subscriptions and signing secret, the event outbox, and the delivery
worker that signs and retries."""
