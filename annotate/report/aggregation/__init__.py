"""Aggregating the labels of an item into the human answer: the majority with the declared tie
rule (`majority`, applied to a study by `study`) and latent-class models (`latent`)."""
