"""The hosted pages a payer opens (mandate signing, card payment): their rules, their HTML
building blocks, and the documented test accounts and cards."""
