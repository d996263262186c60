"""Round 19 (issue 14, towns): a second catalogue of invented sentences with towns, written from general knowledge of
phone messages, call records, report headers, letters and social histories, beside round 18's
(tests/places18_catalogue.py): 'Glen X' / 'Mount X' / 'Port X' / 'Fort X', lower-case and capital towns in messages,
'from <town>, <ST>' in any case, 'at the <town> office', towns after a kin word, in address blocks and headers with no
comma, towns with no town-shaped suffix after a strong frame. Every town is invented or a common town name, every
person invented.

TARGETS: a sentence with its one town marked [[...]], to be read as exactly one CITY span.
LOOK_ALIKES: town-shaped words that are no town (devices, eponyms, scales, wards, a person handing over care): no CITY
span may stand on them.
"""

from __future__ import annotations

from tests.places18_catalogue import target

__all__ = ["LOOK_ALIKES", "TARGETS", "target"]

TARGETS: list[str] = [
    # -- phone and portal messages
    "pt's wife called, they are stuck in traffic near [[quellsburg]]",
    "i moved to [[zandrowville]] last month and need a new pcp",
    "my son lives in [[marlowfield]] and can drive me",
    "we are up at the lake in [[quellhaven]] till sunday",
    "I'm visiting my daughter in [[Zandrowton]] this week.",
    "Caller is in [[Quellsbury]] at a hotel and ran out of meds.",
    "Pt's husband called from [[Glen Quellan]]; she fell this morning.",
    "She is moving to [[Mount Marlow]] to be near family.",
    "Patient lives in [[Port Zandrow]] and prefers the closer lab.",
    "He is stationed at [[Fort Quellbury]] until June.",
    "Pt is from [[Springfield]], OH and is here visiting.",
    "visiting from [[springfield]], oh for the month",
    "FROM [[SPRINGFIELD]], OHIO; HERE FOR THE WEDDING",
    "pt's daughter says she is in [[quellford]] tonight",
    "can you send it to the cvs in [[marlowton]]",
    "we drove back from [[zandrowbury]] last night",
    "i am staying with my brother in [[quellsport]]",
    "heading home to [[zandrowville]] after the appt",
    "PT IS AT HER DAUGHTERS IN [[QUELLSBURG]] UNTIL MONDAY",
    "WIFE CALLED FROM [[MARLOWFIELD]], PT HAS FEVER",
    "LIVES IN [[MOUNT ZANDROW]] WITH WIFE",
    "I'm in [[Quellan]] until Friday.",
    "Hi, we are in [[Glen Marlow]] this weekend, can the refill wait?",
    "I will be at my cousin's in [[Port Quellsby]] next week.",
    # -- call records
    "Call from pt's daughter in [[Quellsport]] re: her mother's meds.",
    "Returned call to pt at his cabin in [[Zandrowmere]].",
    "RN called pt; he is at work in [[Marlowbury]] and will call back.",
    "Outgoing call to Quillby Pharmacy in [[Zandrowdale]], refill confirmed.",
    "Spoke with the home health agency in [[Quellfield]] re: wound care.",
    "Caller location: [[Zandrowburg]]",
    "Call placed to pt's home in [[Glen Zandrow]]; no answer.",
    "Message left for son in [[Mount Quellan]] to call back.",
    "Telephone encounter: pt calling from [[Fort Marlowe]], asks about results.",
    # -- report headers
    "Ordering facility: Quillby Family Medicine, [[Zandrowton]], NH",
    "Performed at: Marlow Imaging Center\n[[Quellsbury]], VT 05401",
    "QUILLBY REGIONAL LAB  [[ZANDROWFIELD]] ME 04401",
    "Referring clinic: Zandrow Pediatrics ([[Quellhaven]])",
    "Client: Quillby Medical Group - [[Marlowport]]",
    "Specimen collected in [[Quellsworth]] and sent to the reference lab.",
    "Report faxed to Dr. Quillby's office in [[Zandrowmont]].",
    "Outside hospital: Quell Memorial ([[Marlowfield]])",
    "Location of study: [[Quellbrook]]",
    "Ordering location: [[Glen Quellan]]",
    # -- letters
    "I saw your patient in our [[Zandrowton]] office on 3/2.",
    "Thank you for referring Ms. Zandrow, a 54-year-old woman from [[Quellsbury]].",
    "He was previously followed by a cardiologist in [[Marlowville]].",
    "cc: Dr. Ann Quillby, Quell Family Practice, [[Zandrowburg]]",
    "Zandrow Cardiology Associates\n14 Main Street\n[[Quellhaven]] NH 03301",
    "Quillby Clinic\n220 Elm Ave\n[[Port Marlow]], ME 04101",
    "Ann Quillby, MD\nQuell Valley Neurology, [[Zandrowfield]]",
    "She will continue care closer to home in [[Quellmouth]].",
    "We will see him again at our [[Marlowford]] clinic in three months.",
    # -- social history
    "Lives in [[East Quellbury]] with her husband.",
    "Grew up in [[Zandrowville]], Ohio; moved here for work.",
    "Retired mill worker from [[Quellsport]].",
    "Works as a mechanic in [[Marlowton]].",
    "She commutes to [[Zandrowford]] daily for work.",
    "Spends winters in [[Fort Marlow]], FL.",
    "Lived in [[Glen Quellan]] for 20 years.",
    "Moved from [[Mount Zandrow]] to be closer to her daughter.",
    "Originally from [[Port Quellsby]], lives here now.",
    "Lives with her partner in a farmhouse outside [[Quellsville]].",
    "Has a brother in [[Zandrowham]] who helps with groceries.",
    "Attends AA meetings in [[Marlowstead]].",
    "Lives with her daughter in [[Quellan]].",
    "Moved here from [[Zandrow]] two years ago.",
    "Pt is visiting from [[Marlow]] for the summer.",
    "Son lives nearby in [[Zandrowmere]].",
    "Family drove in from [[Quellcrest]] this morning.",
    "He is a retired teacher from [[Quellbridge]].",
    "Grew up on a farm near [[Marlowmere]].",
    # -- addresses and fields without commas
    "Address: 9 Birch Lane [[Zandrowton]] VT",
    "Home address: 41 Quell Road\n[[Marlowfield]] NH",
    "Patient's town: [[Quellford]]",
    "Hometown: [[Zandrowbury]]",
    "Residence: [[Quellhaven]], Maine",
    "CITY: [[QUELLSBURG]]   STATE: VT",
    # -- the town part of a place of care or work in lower-case words
    "Seen at the [[Quellsbury]] office last month.",
    "Labs drawn at the [[Zandrowton]] lab yesterday.",
    "Follows at our [[Marlowfield]] clinic.",
    "Works at the Quillby plant in [[Zandrow Falls]].",
    "Admitted to Quell Hospital in [[Marlow Springs]] last May.",
    "Transferred from an outside hospital in [[Quellan Heights]].",
    "Quell Urgent Care ([[Zandrowton]]) visit reviewed.",
    "Outside records from Marlow Medical Center, [[Quellsbury]], reviewed.",
    "Transfer from Zandrow Community Hospital in [[Quellwick]].",
]

LOOK_ALIKES: list[str] = [
    # -- devices, eponyms, scales and formulas with a town's name or shape
    "Device: Boston Scientific pacemaker, interrogated today.",
    "Stent from Boston Scientific placed in the LAD.",
    "Right Hickman port in place, flushed.",
    "Blood cultures drawn from Hickman and peripheral.",
    "Head placed in Mayfield pins for the case.",
    "Head secured in Mayfield.",
    "Labs drawn from Infusaport without difficulty.",
    "Blood drawn from Bardport.",
    "Stanford type A dissection repaired in 2012.",
    "Hx of Stanford A dissection.",
    "Pt placed in reverse Trendelenburg.",
    "Miami J collar in place.",
    "Philadelphia collar removed after CT.",
    "Denver shunt placed for ascites.",
    "Fluids per Parkland formula.",
    "Resuscitation per Parkland.",
    "Kingston pressure 20.",
    "Milwaukee brace at night.",
    "s/p Norwood at 2 weeks of age.",
    "Converted from Norwood to Glenn.",
    # -- wards and units named like towns
    "Pt transferred to Burlington ward at 1400.",
    "Returned to Ellington 4 after CT.",
    "Moved to Wellington bed 3.",
    "Transferred to Quellington unit for telemetry.",
    "Back to Zandrowfield 6 from IR.",
    # -- a person handing over care or reporting
    "Report received from Ashton, RN.",
    "Care taken over from Dalton at 1900.",
    "Received pt from Crawford in PACU.",
    "Report given to Carlton at 0700.",
    "Relieved Whitfield at 1500.",
    "Pt handed off to Milton, night RN.",
    "Consult from Newton, hematology fellow.",
    "Plan per discussion with Ashford.",
    # -- clinical words after a place preposition
    "Weaned from Bipap to nasal cannula.",
    "Pt in Fowler's position.",
    "Sent to Radiology for CT.",
    "Flushed from Broviac without resistance.",
    "Went to Dialysis at 0800.",
    "Dr. Quellington in to see pt.",
    "Spoke with Ms. Ashford from case management.",
    "Pain in left shoulder since the fall.",
]
