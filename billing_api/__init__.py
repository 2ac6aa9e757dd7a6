"""The client of the invoicing and payment-collection service (httpx + pydantic, no Prefect).

Today this package holds the contract, ``openapi.yaml``; the typed client arrives with its own
issue. The sandbox reads the same file, and nothing else is shared between the two.
"""
