"""Network clients, the only code here that talks to a server: GROBID (`grobid`) and the online title/identifier
resolvers (`resolvers`: DBLP, Semantic Scholar). No Beam.
"""
