"""Personal questions: what a question looks like when it is about someone's memory.

The counterpart of generic.py. A question about the subject ("what does she like to
eat") resembles these more than it resembles generic requests; a request no memory
answers ("how do I make pancakes") the other way round, even when one of the subject's
facts shares its topic. ``Embedder.relevance_bar`` raises the bar by how much more the
question resembles generic requests than personal questions (the mean of the three
nearest of each), so a topical fact does not answer a request that is not about the
person.

Written before any measurement, as kinds of thing a memory holds about a person
(``PersonalKind``), two questions in English and two in Chinese for each, asked about
a third person as an agent asks them. None is a question of the recall set
(tests/embeddings/test_eval_recall.py holds that), though the kinds are the kinds the
recall set's questions ask about, since they are what a memory holds.
"""
from __future__ import annotations

from enum import StrEnum


class PersonalKind(StrEnum):
    """The kinds of thing a memory holds that the personal questions ask about."""

    WORK = "work"
    HOME = "home"
    LANGUAGES = "languages"
    FOOD_AND_DRINK = "food_and_drink"
    DIET = "diet"
    TRAVEL_HABITS = "travel_habits"
    PASTIMES = "pastimes"
    TASTES = "tastes"
    SCHEDULE = "schedule"
    CONTACT = "contact"
    FAMILY_AND_PETS = "family_and_pets"
    LEARNING = "learning"
    PROJECTS = "projects"
    EMPLOYER = "employer"
    ANSWERS = "answers"


# Two in English, then two in Chinese, for every kind.
QUESTIONS_BY_KIND: dict[PersonalKind, tuple[str, ...]] = {
    PersonalKind.WORK: ("what kind of work does she do", "what is his position at the company",
                        "她是干哪一行的", "他在公司担任什么职位"),
    PersonalKind.HOME: ("what town does he live in", "where is her home", "她家在哪里", "他现在住在哪个国家"),
    PersonalKind.LANGUAGES: ("which languages does she understand", "what is his native language",
                             "她会说什么语言", "他的母语是什么"),
    PersonalKind.FOOD_AND_DRINK: ("what does she like to eat", "what's his favourite drink",
                                  "她喜欢吃什么菜", "他平时喝茶还是咖啡"),
    PersonalKind.DIET: ("is there any food he avoids", "does she eat meat", "他有什么忌口", "她吃不吃海鲜"),
    PersonalKind.TRAVEL_HABITS: ("how does she like to travel", "which hotel does he usually book",
                                 "她出差喜欢住什么酒店", "他坐火车喜欢什么座位"),
    PersonalKind.PASTIMES: ("what are his hobbies", "how does she spend her evenings",
                            "她平时有什么兴趣爱好", "他下班后喜欢做什么"),
    PersonalKind.TASTES: ("what films does she like", "which authors does he read", "她喜欢看什么电影", "他喜欢哪个歌手"),
    PersonalKind.SCHEDULE: ("when is he usually free", "what are her working hours", "她什么时候有空", "他几点下班"),
    PersonalKind.CONTACT: ("what's the best channel to message her", "does he prefer a call or a text",
                           "她的联系方式是什么", "给他发消息用什么软件"),
    PersonalKind.FAMILY_AND_PETS: ("does she have any children", "what is his dog called", "她家里有几口人", "他养猫吗"),
    PersonalKind.LEARNING: ("what is she learning at the moment", "which degree is he working on",
                            "她在上什么课", "他在准备什么考试"),
    PersonalKind.PROJECTS: ("which project is he working on", "what tools does her team use",
                            "她负责哪个项目", "他们项目用什么技术栈"),
    PersonalKind.EMPLOYER: ("who does she work for", "what does his company make", "她在哪家公司上班", "他的单位是做什么的"),
    PersonalKind.ANSWERS: ("how does he want answers written", "what tone should I use with her",
                           "她希望回答怎么写", "跟他说话要用什么语气"),
}

PERSONAL_QUESTIONS: tuple[str, ...] = tuple(question for kind in PersonalKind for question in QUESTIONS_BY_KIND[kind])
