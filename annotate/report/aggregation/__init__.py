"""Aggregating the labels of an item into the human answer: the majority with the declared tie
rule (`majority`, applied to a study by `study`) and latent-class models (`latent`: fitted by
`em`, refitted on bootstrap replicates by `batch_em` for `refit`'s design effect)."""
