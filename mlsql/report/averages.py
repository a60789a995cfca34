"""The averages a report shows side by side, and the measures it shows for each.

Apart from :mod:`mlsql.report.model` so that the formats, which the model's
``to_*`` methods call, read them without importing the model back.
"""

#: the averages shown side by side, and the measures shown for each ("f" is F1 or F-beta)
AVERAGES = ("micro", "macro", "weighted", "samples")
MEASURES = ("precision", "recall", "f", "jaccard")
