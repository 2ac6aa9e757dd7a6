"""The webhook receiver's work: check a delivery as the service signs it, store the event in the
ledger before acknowledging it, and hand it to Prefect as an event that deployment triggers
react to (``docs/service.md`` §11 Webhooks).

- ``verify.py``: the delivery's credentials and signature, in constant time, with a replay window;
- ``received.py``: a verified body as an event to store (both payload shapes; dedup key);
- ``store.py``: group commits of a burst of deliveries into the ledger (one writer thread);
- ``prefect_events.py``: the Prefect event of a stored event (name, resource, related ids);
- ``emitter.py``: the ledger as an outbox: stored events handed to Prefect, each once;
- ``directory.py``: which credential block serves the biller an event names;
- ``subscription.py``: ``billops webhooks setup`` (subscription, secret rotation, target auth).

The ASGI app and the commands are in ``billops/webhooks_app.py`` and ``billops/webhooks_cli.py``.
"""
